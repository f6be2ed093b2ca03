import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CHANNELS, USERS } from "../helpers/app-harness.ts";
import { type ChildApp, digestTotals, eventually, freePort } from "../helpers/live-fixtures.ts";
import { type LiveStage, startLiveStage } from "../helpers/live-stage.ts";

/**
 * Crash recovery under the limits Slack gives apps outside the Marketplace created since
 * 2025-05-29: conversations.replies at one request a minute, 15 messages a page. The app dies the
 * moment Slack accepts a digest; the card's thread is busy (people replied), so the digest is on
 * the second page of the lookup, and the second page is throttled. The restarted app must wait,
 * resume at that page, find the digest and post nothing twice.
 *
 * The emulator's clock jumps 58 s after each first page, so its Retry-After is about two seconds
 * instead of a minute: the same limit, without the test waiting a minute for it.
 */

const JOINS = 30;
const REPLIES = 20;

let skew = 0;
let stage: LiveStage;
let env: Record<string, string>;

beforeAll(async () => {
  stage = await startLiveStage({
    title: "Recovered under the limit",
    tmpPrefix: "onair-faults-history-limit-",
    emulatorNow: () => Date.now() + skew,
  });
  env = stage.childEnv({ port: await freePort(), logLevel: "warn" });
}, 30_000);

afterAll(async () => {
  await stage?.close();
});

async function start(): Promise<ChildApp> {
  for (const c of stage.children) await c.stop().catch(() => undefined);
  const child = await stage.spawn(env);
  stage.emulator.setAppUrl(child.origin);
  return child;
}

describe("crash recovery under the 1-a-minute history limit", () => {
  it("waits, resumes at the throttled page, adopts the digest and posts nothing twice", async () => {
    const { emulator, event } = stage;
    const first = await start();
    const cardTs = await stage.notify(first.origin);
    const control = stage.sandbox.sandbox.control;
    await control.setState(event.eventId, { state: "IN_EVENT" });
    // Live: the event's Slack call block (posts/call.ts) goes into the thread first; the kill
    // below is for the digest.
    const isCall = (m: { metadata?: unknown }) =>
      (m.metadata as { event_type?: string } | undefined)?.event_type === "onair_call";
    await eventually(
      () => (emulator.workspace.replies(CHANNELS.events, cardTs).some(isCall) ? true : undefined),
      "the call block",
      20_000,
    );
    // People talk in the card's thread: the lookup's first page is theirs.
    const channel = emulator.workspace.channels.get(CHANNELS.events);
    if (!channel) throw new Error("no #events");
    for (let i = 0; i < REPLIES; i++) {
      emulator.workspace.postMessage(channel, USERS.member, {
        text: `comment ${i}`,
        thread_ts: cardTs,
      });
    }
    // The burst is held back (429s) so it all goes into the one digest the kill interrupts.
    emulator.throttle({
      method: "chat.postMessage",
      channel: CHANNELS.events,
      times: 1_000,
      retryAfterSec: 1,
    });
    const burst = await control.attendees(event.eventId, { count: JOINS });
    expect(burst.delivered).toBe(JOINS);
    await stage.waitApplied(JOINS);
    const killed = new Promise<void>((resolve) => first.proc.once("exit", () => resolve()));
    const off = emulator.onCall((call: CallRecord) => {
      if (call.method !== "chat.postMessage" || !call.ok || call.args.thread_ts !== cardTs) return;
      off();
      first.proc.kill("SIGKILL");
    });
    emulator.clearThrottles();
    await killed;
    const digests = () =>
      emulator.workspace
        .replies(CHANNELS.events, cardTs)
        .filter((m) => m.user === emulator.workspace.app.botUserId && !isCall(m));
    expect(digestTotals(digests().map((d) => d.text ?? ""))).toEqual({ joined: JOINS, left: 0 });

    emulator.setRateLimits({ nonMarketplace: true });
    const since = emulator.calls.length;
    const jump = emulator.onCall((call) => {
      if (call.method === "conversations.replies" && call.ok && call.args.cursor === undefined) {
        skew += 58_000;
      }
    });
    const second = await start();
    try {
      // The lookup: page one, then page two throttled, then page two again after Retry-After.
      await eventually(
        () =>
          emulator.calls
            .slice(since)
            .some(
              (c) => c.method === "conversations.replies" && c.ok && c.args.cursor !== undefined,
            )
            ? true
            : undefined,
        "the second page read after its Retry-After",
        30_000,
      );
      await new Promise((r) => setTimeout(r, 2_000));
    } finally {
      jump();
    }
    const replies = emulator.calls.slice(since).filter((c) => c.method === "conversations.replies");
    expect(replies.some((c) => c.status === 429)).toBe(true);
    expect(digests()).toHaveLength(1);
    expect(digestTotals(digests().map((d) => d.text ?? ""))).toEqual({ joined: JOINS, left: 0 });
    expect(second.output.join("")).not.toContain("could not look in Slack");
  }, 90_000);
});
