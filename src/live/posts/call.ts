import type { KnownBlock, WebClient } from "@slack/web-api";
import { NO_UNFURL } from "../../blocks/kit.ts";
import type { LiveSubscription } from "../../domain/subscription.ts";
import { escapeMrkdwn } from "../../domain/text.ts";
import {
  isPassingRefusal,
  isPlatformError,
  isRateLimited,
  slackErrorName,
} from "../../slack-errors.ts";
import type { InstanceLive } from "../instance.ts";
import type { LiveModel } from "../live-model.ts";
import type { CallPosting } from "../live-record.ts";
import { methodCall, type PostSpec, postOnce } from "../post-once.ts";
import { findReply } from "../recover.ts";
import { joinUrlOf, open, over, signature, titleOf } from "./call-plan.ts";
import type { PostContext } from "./context.ts";

/**
 * The live event as a Slack call (README, "Using it in Slack"): when an instance
 * goes live, calls.add (external_unique_id `{eventId}:{instanceId}`, join_url the attendee join
 * link, created_by the person who notified the channel, as Slack requires for a bot token) and
 * the `call` block in the card's thread; Slack users among the present attendees, matched by
 * e-mail and only where the workspace shows attendee e-mails, added and removed with
 * calls.participants.*, one step per turn; calls.end when the instance ends. One call per
 * instance, held by one channel of the event (the first notified channel with a card).
 *
 * Exactly once: adding the call and posting its block is one post of the protocol (post-once.ts),
 * marked before calls.add. The call's id is saved as soon as Slack answers, so after a crash the
 * next owner only posts the block; a block already in the thread (its metadata names the
 * instance) is adopted, and calls.info reads who Slack has in the call. Slack offers no way to
 * look a call up by external_unique_id: a crash between calls.add's answer and that save adds
 * the call again under the same external_unique_id (which Slack asks to be unique per provider).
 * Participant changes and the end are idempotent and need no mark.
 *
 * A workspace without calls:write yet (installed before the app asked for it), or any other
 * refusal of the Calls API, costs that instance's call, never the card: logged once, not tried
 * again for the instance; the settings Check names the reinstall.
 *
 * When a step is due is decided apart, purely (call-plan.ts, which the planner asks); this file
 * takes the step.
 */

export const CALL_EVENT = "onair_call";
/** Present attendees' e-mails looked up per turn (users.lookupByEmail, tier 4). */
const LOOKUPS_PER_TURN = 20;
/** Users per calls.participants.add / remove. */
const USERS_PER_CALL = 50;
/** `${team}:${e-mail}` → Slack user id ("" for none); bounded. */
const KNOWN_MAX = 20_000;
const known = new Map<string, string>();

/** A refusal of the Calls API: the call of this instance is given up, the channel goes on. */
class CallsRefused extends Error {
  constructor(readonly code: string) {
    super(`Slack refused the call: ${code}`);
  }
}

/** Awaits a calls.* method; a refusal that will not pass becomes CallsRefused. */
async function calls<T>(p: Promise<T>): Promise<T> {
  try {
    return await methodCall(p);
  } catch (err) {
    if (isPlatformError(err) && !isRateLimited(err) && !isPassingRefusal(err)) {
      throw new CallsRefused(slackErrorName(err) ?? "error");
    }
    throw err;
  }
}

type Found = { ts: string; callId: string };

/** calls.add (unless its id is saved already), then the call block in the card's thread. */
function addCall(
  { port, ch, c, client }: PostContext,
  cardTs: string,
  sub: LiveSubscription | undefined,
  instanceId: string,
  wanted: boolean,
): PostSpec<number, Found, string> {
  const call = (): CallPosting => {
    if (c.call?.instanceId !== instanceId) c.call = { instanceId };
    return c.call;
  };
  return {
    kind: "call",
    marked: () => (c.call?.instanceId === instanceId ? c.call.adding : undefined),
    find: (since, progress) =>
      findReply(
        client,
        ch,
        cardTs,
        since,
        (m) => {
          const meta = m.metadata;
          const p = meta?.event_payload as { eventId?: unknown; instanceId?: unknown } | undefined;
          if (meta?.event_type !== CALL_EVENT || p?.eventId !== port.eventId) return undefined;
          if (p.instanceId !== instanceId || !m.ts) return undefined;
          const block = (m as { blocks?: Array<{ type?: string; call_id?: string }> }).blocks?.find(
            (b) => b.type === "call",
          );
          return block?.call_id ? { ts: m.ts, callId: block.call_id } : undefined;
        },
        progress,
      ),
    // Not found, and the instance ended meanwhile (or the channel was muted): no block now; a
    // call added before the crash is ended by the next turn.
    notFound: () => (wanted ? "post" : "later"),
    adopt: (found) => {
      const k = call();
      k.id = found.callId;
      k.blockTs = found.ts;
    },
    mark: (now) => {
      call().adding = now;
    },
    unmark: () => {
      if (c.call) delete c.call.adding;
    },
    call: async () => {
      const k = call();
      if (!sub) throw new Error("live: a call to add without its subscription");
      const title = titleOf(sub);
      const joinUrl = joinUrlOf(sub) ?? "";
      if (!k.id) {
        const res = (await calls(
          client.calls.add({
            external_unique_id: `${port.eventId}:${instanceId}`,
            join_url: joinUrl,
            created_by: sub.createdBy ?? "",
            title,
            date_start: Math.floor(Date.now() / 1000),
          }),
        )) as { call?: { id?: string } };
        if (!res.call?.id) throw new Error("calls.add answered without a call id");
        k.id = res.call.id;
        k.title = title;
        k.joinUrl = joinUrl;
        // Saved before the block goes out: a crash now must not add the call a second time.
        await port.save();
      }
      const posted = await client.chat.postMessage({
        channel: ch,
        thread_ts: cardTs,
        text: `${escapeMrkdwn(title)}: join the call`,
        // The Calls API's block (blocks-and-objects.md), which @slack/types does not list.
        blocks: [{ type: "call", call_id: k.id } as unknown as KnownBlock],
        ...NO_UNFURL,
        metadata: {
          event_type: CALL_EVENT,
          event_payload: { eventId: port.eventId, instanceId },
        },
      });
      if (!posted.ts) throw new Error("chat.postMessage answered without a ts");
      return posted.ts;
    },
    record: (ts) => {
      call().blockTs = ts;
    },
  };
}

/** Who Slack has in the call now (after an adoption, what was saved may be behind). */
async function readUsers(client: WebClient, k: CallPosting & { id: string }): Promise<void> {
  try {
    const res = (await methodCall(client.calls.info({ id: k.id }))) as {
      call?: { users?: Array<{ slack_id?: string }> };
    };
    k.users = (res.call?.users ?? []).flatMap((u) => (u.slack_id ? [u.slack_id] : []));
  } catch (err) {
    // No calls:read yet: the next sync adds whoever is missing (adding twice is harmless).
    if (!isPlatformError(err) || isRateLimited(err)) throw err;
  }
}

/** The present attendees' Slack user ids, as far as looked up; `complete` when all were. */
async function presentUsers(
  client: WebClient,
  team: string,
  inst: InstanceLive,
): Promise<{ ids: Set<string>; complete: boolean }> {
  const ids = new Set<string>();
  let lookups = 0;
  let complete = true;
  for (const [guid, flat] of inst.sessions) {
    if (flat.length === 0 || flat[flat.length - 1] !== 0) continue;
    const email = inst.people.get(guid)?.email?.trim().toLowerCase();
    if (!email) continue;
    const key = `${team}:${email}`;
    let id = known.get(key);
    if (id === undefined) {
      if (lookups >= LOOKUPS_PER_TURN) {
        complete = false;
        continue;
      }
      lookups++;
      try {
        const res = await methodCall(client.users.lookupByEmail({ email }));
        id = res.user?.deleted || res.user?.is_bot ? "" : (res.user?.id ?? "");
      } catch (err) {
        if (!isPlatformError(err) || isRateLimited(err) || isPassingRefusal(err)) throw err;
        // users_not_found: not a member of this workspace.
        id = "";
      }
      if (known.size >= KNOWN_MAX) known.delete(known.keys().next().value as string);
      known.set(key, id);
    }
    if (id) ids.add(id);
  }
  return { ids, complete };
}

/** One batch of participant changes toward who is present (nobody while e-mails are hidden). */
async function syncParticipants(
  { port, client }: PostContext,
  k: CallPosting & { id: string },
  inst: InstanceLive,
  team: string,
  emailsShown: boolean,
): Promise<void> {
  const sig = signature(inst);
  const { ids, complete } = emailsShown
    ? await presentUsers(client, team, inst)
    : { ids: new Set<string>(), complete: true };
  const have = new Set(k.users ?? []);
  const add = [...ids].filter((u) => !have.has(u)).slice(0, USERS_PER_CALL);
  const remove = [...have].filter((u) => !ids.has(u)).slice(0, USERS_PER_CALL);
  if (add.length > 0) {
    await calls(
      client.calls.participants.add({ id: k.id, users: add.map((slack_id) => ({ slack_id })) }),
    );
    for (const u of add) have.add(u);
  }
  if (remove.length > 0) {
    await calls(
      client.calls.participants.remove({
        id: k.id,
        users: remove.map((slack_id) => ({ slack_id })),
      }),
    );
    for (const u of remove) have.delete(u);
  }
  k.users = [...have];
  const done = complete && add.length + remove.length < USERS_PER_CALL;
  if (done) k.synced = sig;
  k.syncedAt = Date.now();
  await port.save();
}

/** What a call step is handed beside the channel's context. */
export interface CallPort {
  readonly model: LiveModel;
  readonly team: string;
  emailsShown(): Promise<boolean>;
}

/** One step of the call in channel `cx.ch`, as `callAction` asked for it. */
export async function keepCall(run: CallPort, cx: PostContext): Promise<void> {
  const { port, ch, c, client } = cx;
  const sub = run.model.sub;
  const inst = run.model.live.current();
  const k = c.call;
  try {
    if (open(k) && k.adding === undefined && over(sub, inst, k, ch)) {
      await endCall(cx, k, inst?.id === k.instanceId ? inst : undefined);
      return;
    }
    const unposted = k && k.instanceId === inst?.id && !k.skipped && !k.ended && !k.blockTs;
    if (k?.adding !== undefined || unposted) {
      const wanted = sub !== undefined && !over(sub, inst, k, ch);
      if (!c.cardTs || !k || (!wanted && k.adding === undefined)) return;
      const outcome = await postOnce(port, ch, addCall(cx, c.cardTs, sub, k.instanceId, wanted));
      if (outcome === "adopted" && open(c.call)) {
        await readUsers(client, c.call);
        await port.save();
      }
      return;
    }
    if (open(k)) {
      if (!sub || !inst) return;
      const title = titleOf(sub);
      const joinUrl = joinUrlOf(sub);
      if (k.title !== title || k.joinUrl !== joinUrl) {
        await calls(
          client.calls.update({
            id: k.id,
            title,
            ...(joinUrl ? { join_url: joinUrl } : {}),
          }),
        );
        k.title = title;
        if (joinUrl) k.joinUrl = joinUrl;
        await port.save();
        return;
      }
      await syncParticipants(cx, k, inst, run.team, await run.emailsShown());
      return;
    }
    if (!sub || !inst || !c.cardTs) return;
    c.call = { instanceId: inst.id };
    await postOnce(port, ch, addCall(cx, c.cardTs, sub, inst.id, true));
  } catch (err) {
    if (!(err instanceof CallsRefused)) throw err;
    const given = c.call ?? { instanceId: inst?.id ?? "" };
    delete given.adding;
    given.skipped = err.code;
    c.call = given;
    port.logger.info(
      { channel: ch, eventId: port.eventId, error: err.code },
      "live: Slack refused the event's call (the settings Check says what is missing); the card goes on without it",
    );
    await port.save();
  }
}

async function endCall(
  { port, client }: PostContext,
  k: CallPosting & { id: string },
  inst: InstanceLive | undefined,
): Promise<void> {
  try {
    const [from, to] = [inst?.marks.find(([s]) => s === "IN_EVENT")?.[1], inst?.endedAt];
    const duration = from && to ? { duration: Math.max(0, Math.round((to - from) / 1000)) } : {};
    await calls(client.calls.end({ id: k.id, ...duration }));
  } catch (err) {
    // Ended already (by an earlier owner whose record was lost): what was wanted.
    const done =
      err instanceof CallsRefused && ["inactive_call", "invalid_call_id"].includes(err.code);
    if (!done) throw err;
  }
  k.ended = true;
  await port.save();
}
