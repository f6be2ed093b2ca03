import type { WebClient } from "@slack/web-api";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { addNotice, emptyPending } from "../../../src/live/digest.ts";
import type { ChannelPosting } from "../../../src/live/live-record.ts";
import { type PostPort, type PostSpec, postOnce } from "../../../src/live/post-once.ts";
import { firstCard } from "../../../src/live/posts/card.ts";
import type { PostContext } from "../../../src/live/posts/context.ts";
import { counter } from "../../../src/live/posts/counter.ts";
import { digest } from "../../../src/live/posts/digest.ts";
import { reminder } from "../../../src/live/posts/reminder.ts";
import type { WantedReminder } from "../../../src/live/reminders.ts";

/**
 * The exactly-once protocol (src/live/post-once.ts) with each post kind's spec, with no Slack
 * and no store: a fake Slack client at the edge and the channel's posting state kept as its last
 * save. A crash before the call, after the call, or before the record is a process that dies
 * there: the next owner starts from what was saved, and Slack ends up with exactly one post,
 * found and adopted when it went out.
 */

class Crash extends Error {}

type Crashing = "before-call" | "after-call" | "before-record" | "429" | undefined;

interface Posted {
  channel: string;
  ts: string;
  thread_ts?: string;
  text: string;
  bot_id: string;
  metadata?: unknown;
}

function fakeSlack() {
  const posted: Posted[] = [];
  let crash: Crashing;
  let clock = 1_000_000;
  const client = {
    auth: { test: async () => ({ ok: true, bot_id: "B1", user_id: "UB1" }) },
    chat: {
      postMessage: async (args: Omit<Posted, "ts" | "bot_id">) => {
        if (crash === "before-call") {
          crash = undefined;
          throw new Crash("died before the call");
        }
        if (crash === "429") {
          crash = undefined;
          throw Object.assign(new Error("A rate limit was exceeded"), {
            code: "slack_webapi_rate_limited_error",
            retryAfter: 1,
          });
        }
        const ts = `${++clock}.000100`;
        posted.push({ ...args, ts, bot_id: "B1" });
        if (crash === "after-call") {
          crash = undefined;
          throw new Crash("died after the call, before its answer");
        }
        return { ok: true, ts };
      },
    },
    conversations: {
      history: async ({ channel }: { channel: string }) => ({
        ok: true,
        messages: posted.filter((m) => m.channel === channel && !m.thread_ts).reverse(),
      }),
      replies: async ({ channel, ts }: { channel: string; ts: string }) => ({
        ok: true,
        messages: posted.filter(
          (m) => m.channel === channel && m.thread_ts === ts && !unseen.has(m.ts),
        ),
      }),
    },
  };
  /** Posts Slack took but does not list yet (a call still on its way when a lookup reads). */
  const unseen = new Set<string>();
  return {
    posted,
    unseen,
    client: client as unknown as WebClient,
    crashAt(at: Crashing) {
      crash = at;
    },
  };
}

/** One owner of the channel's posting state: its memory, and the store's copy (its last save). */
function owner(stored: string, slack: ReturnType<typeof fakeSlack>, failSave?: number) {
  const c = JSON.parse(stored) as ChannelPosting;
  const store = { saved: stored, saves: 0 };
  const port: PostPort = {
    eventId: "E1",
    save: async () => {
      store.saves++;
      if (store.saves === failSave) throw new Crash("died before the record was saved");
      store.saved = JSON.stringify(c);
    },
    mayCall: () => true,
    lookups: { progress: new Map(), failingSince: new Map() },
    logger: pino({ level: "silent" }),
  };
  const cx: PostContext = { port, ch: "C1", c, client: slack.client };
  return { c, cx, store };
}

interface Kind {
  name: string;
  start: ChannelPosting;
  spec: (cx: PostContext) => PostSpec<never, unknown, unknown>;
  /** What the channel records once the post is recorded, whichever way. */
  recorded: (c: ChannelPosting, post: Posted) => void;
}

const pending = emptyPending();
addNotice(pending, { kind: "join", name: "Ana", instanceId: "i1" });
addNotice(pending, { kind: "join", name: "Bo", instanceId: "i1" });

const card = { text: "Town hall", blocks: [], hash: "h1" };
const KINDS: Kind[] = [
  {
    name: "card",
    start: { pending: emptyPending(), seq: 0 },
    spec: (cx) => firstCard(cx, card) as PostSpec<never, unknown, unknown>,
    recorded: (c, post) => {
      expect(c.cardTs).toBe(post.ts);
      expect(c.cardHash).toBe("h1");
      expect(c.cardPosting).toBeUndefined();
    },
  },
  {
    name: "counter",
    start: { cardTs: "1.1", cardHash: "h1", pending: emptyPending(), seq: 0 },
    spec: (cx) => counter(cx, "1.1", "2 joined") as PostSpec<never, unknown, unknown>,
    recorded: (c, post) => {
      expect(post.thread_ts).toBe("1.1");
      expect(c.counterTs).toBe(post.ts);
      expect(c.counterPosting).toBeUndefined();
    },
  },
  {
    name: "digest",
    start: { cardTs: "1.1", cardHash: "h1", pending, seq: 0 },
    spec: (cx) =>
      digest(cx, "1.1", async (taken) => `${taken.joined} joined`) as PostSpec<
        never,
        unknown,
        unknown
      >,
    recorded: (c, post) => {
      expect(post.thread_ts).toBe("1.1");
      expect(post.text).toBe("2 joined");
      expect(c.seq).toBe(1);
      expect(c.pending.joined).toBe(0);
      expect(c.digestPosting).toBeUndefined();
    },
  },
];

describe("one exactly-once protocol for every post kind", () => {
  for (const kind of KINDS) {
    it(`${kind.name}: no crash, one post, recorded`, async () => {
      const slack = fakeSlack();
      const first = owner(JSON.stringify(kind.start), slack);
      expect(await postOnce(first.cx.port, "C1", kind.spec(first.cx))).toBe("posted");
      expect(slack.posted).toHaveLength(1);
      kind.recorded(JSON.parse(first.store.saved) as ChannelPosting, slack.posted[0] as Posted);
    });

    for (const crash of ["before-call", "after-call", "before-record"] as const) {
      it(`${kind.name}: a crash ${crash} leaves exactly one post, ${crash === "before-call" ? "posted by the next owner" : "found and adopted"}`, async () => {
        const slack = fakeSlack();
        // The first owner: the mark is its first save, the record its second.
        const first = owner(
          JSON.stringify(kind.start),
          slack,
          crash === "before-record" ? 2 : undefined,
        );
        if (crash !== "before-record") slack.crashAt(crash);
        await expect(postOnce(first.cx.port, "C1", kind.spec(first.cx))).rejects.toBeInstanceOf(
          Crash,
        );
        expect(slack.posted).toHaveLength(crash === "before-call" ? 0 : 1);
        // What the store kept: the mark, no record.
        const kept = JSON.parse(first.store.saved) as Record<string, unknown>;
        expect(Object.keys(kept).some((k) => k.endsWith("Posting"))).toBe(true);
        // The next owner starts from the store.
        const next = owner(first.store.saved, slack);
        const outcome = await postOnce(next.cx.port, "C1", kind.spec(next.cx));
        expect(outcome).toBe(crash === "before-call" ? "posted" : "adopted");
        expect(slack.posted).toHaveLength(1);
        kind.recorded(JSON.parse(next.store.saved) as ChannelPosting, slack.posted[0] as Posted);
      });
    }
  }

  it("a digest adopted after a re-post was refused takes out what the found post took, not the mark", async () => {
    const slack = fakeSlack();
    const start: ChannelPosting = { cardTs: "1.1", cardHash: "h1", pending, seq: 0 };
    const spec = (cx: PostContext) => digest(cx, "1.1", async (taken) => `${taken.joined} joined`);
    // The first owner posts digest 1 (Ana, Bo) and dies before Slack's answer.
    const first = owner(JSON.stringify(start), slack);
    slack.crashAt("after-call");
    await expect(postOnce(first.cx.port, "C1", spec(first.cx))).rejects.toBeInstanceOf(Crash);
    // Its post is not listed yet when the next owner looks, which has folded in one more join:
    // it marks seq 1 again with all three, and Slack answers 429 (nothing went out).
    const firstTs = slack.posted[0]?.ts ?? "";
    slack.unseen.add(firstTs);
    const second = owner(first.store.saved, slack);
    addNotice(second.c.pending, { kind: "join", name: "Cy", instanceId: "i1" });
    slack.crashAt("429");
    await expect(postOnce(second.cx.port, "C1", spec(second.cx))).rejects.toThrow(/rate limit/);
    // Its store still holds that mark (seq 1, three joins) when a third owner takes over, and
    // by then the first post (two joins) is listed: adopted for what it took.
    expect((JSON.parse(second.store.saved) as ChannelPosting).digestPosting?.taken.joined).toBe(3);
    slack.unseen.delete(firstTs);
    const third = owner(second.store.saved, slack);
    expect(await postOnce(third.cx.port, "C1", spec(third.cx))).toBe("adopted");
    expect(third.c.pending.joined).toBe(1);
    expect(third.c.pending.sample.map(([, name]) => name)).toEqual(["Cy"]);
    expect(await postOnce(third.cx.port, "C1", spec(third.cx))).toBe("posted");
    expect(slack.posted.map((p) => p.text)).toEqual(["2 joined", "1 joined"]);
    expect(third.c.pending.joined).toBe(0);
  });

  it("a refusal drops the mark: nothing went out, so the next try posts without looking", async () => {
    const slack = fakeSlack();
    const refusing = {
      ...slack.client,
      chat: {
        postMessage: async () => {
          const err = Object.assign(new Error("An API error occurred: not_in_channel"), {
            code: "slack_webapi_platform_error",
            data: { ok: false, error: "not_in_channel" },
          });
          throw err;
        },
      },
    } as unknown as WebClient;
    const first = owner(JSON.stringify(KINDS[0]?.start), slack);
    const cx = { ...first.cx, client: refusing };
    await expect(postOnce(cx.port, "C1", firstCard(cx, card))).rejects.toThrow(/not_in_channel/);
    expect(first.c.cardPosting).toBeUndefined();
  });

  describe("a reminder (chat.scheduleMessage)", () => {
    const wanted: WantedReminder = { key: "k1", postAt: 2_000_000_000, text: "Starts in 10 min" };
    function scheduler() {
      const held: Array<{ id: string; post_at: number; text: string }> = [];
      let crash: "before-call" | "after-call" | undefined;
      const client = {
        chat: {
          scheduleMessage: async (a: { post_at: number; text: string }) => {
            if (crash === "before-call") {
              crash = undefined;
              throw new Crash("died before the call");
            }
            const id = `Q${held.length + 1}`;
            held.push({ id, post_at: a.post_at, text: a.text });
            if (crash === "after-call") {
              crash = undefined;
              throw new Crash("died after the call");
            }
            return { ok: true, scheduled_message_id: id };
          },
          scheduledMessages: {
            list: async () => ({ ok: true, scheduled_messages: held }),
          },
        },
      } as unknown as WebClient;
      return { held, client, crashAt: (at: typeof crash) => (crash = at) };
    }

    for (const crash of ["before-call", "after-call", "before-record"] as const) {
      it(`a crash ${crash} leaves exactly one scheduled`, async () => {
        const slack = scheduler();
        const stillWanted = (key: string) => (key === wanted.key ? wanted : undefined);
        const start = JSON.stringify({ pending: emptyPending(), seq: 0 });
        const fake = fakeSlack();
        const first = owner(start, fake, crash === "before-record" ? 2 : undefined);
        if (crash !== "before-record") slack.crashAt(crash);
        const cx1 = { ...first.cx, client: slack.client };
        await expect(
          postOnce(cx1.port, "C1", reminder(cx1, wanted, stillWanted)),
        ).rejects.toBeInstanceOf(Crash);
        const next = owner(first.store.saved, fake);
        const cx2 = { ...next.cx, client: slack.client };
        // The next owner settles the mark first: found, adopted; not found, left to the next turn.
        const settled = await postOnce(cx2.port, "C1", reminder(cx2, undefined, stillWanted));
        expect(settled).toBe(crash === "before-call" ? "later" : "adopted");
        if (settled === "later") {
          expect(await postOnce(cx2.port, "C1", reminder(cx2, wanted, stillWanted))).toBe("posted");
        }
        expect(slack.held).toHaveLength(1);
        const c = JSON.parse(next.store.saved) as ChannelPosting;
        expect(c.reminders).toEqual([{ id: slack.held[0]?.id, postAt: wanted.postAt, key: "k1" }]);
        expect(c.reminderPosting).toBeUndefined();
      });
    }
  });
});
