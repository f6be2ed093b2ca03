import { webApi } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import { EventBusyError, type EventLockOptions, withEventLock } from "../../live/lock.ts";
import type { EventRecord, UserLink } from "../../store/index.ts";
import { RelayError } from "../../upstream/errors.ts";
import type { Event } from "../../upstream/events/schemas.ts";
import { effectiveSettings, USER_ERROR_CODES, UserFacingError, withUserToken } from "../access.ts";
import { buildNoticeModal } from "../blocks/event-form.ts";
import type { KnownBlock, ModalView } from "../blocks/kit.ts";
import { userMessageOf } from "../router.ts";

/** Where a flow started, carried through a modal's private_metadata. */
export interface FlowMeta {
  /** The channel the command ran in, for ephemeral answers; absent from App Home and shortcuts. */
  channel?: string;
  eventId?: string;
  /** On edit: the start as it was when the form opened. */
  originalStart?: number;
  /** On edit: whether the people pickers were shown (not when too many to edit). */
  people?: { panelists: boolean; moderators: boolean };
}

export function encodeMeta(meta: FlowMeta): string {
  return JSON.stringify(meta);
}

export function decodeMeta(raw: string | undefined): FlowMeta {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as unknown;
    return v && typeof v === "object" ? (v as FlowMeta) : {};
  } catch {
    return {};
  }
}

/**
 * Opens a placeholder modal at once (a trigger is valid 3 s), then does the slow work in `build`
 * and replaces the placeholder with its view, or with the failure's plain sentence.
 */
export async function openThenFill(
  deps: Deps,
  client: WebClient,
  triggerId: string,
  title: string,
  build: () => Promise<ModalView>,
): Promise<void> {
  let viewId: string | undefined;
  try {
    const res = await client.views.open({
      trigger_id: triggerId,
      view: buildNoticeModal(title, ":hourglass_flowing_sand: One moment…"),
    });
    viewId = res.view?.id;
  } catch (err) {
    throw new UserFacingError(
      USER_ERROR_CODES.invalid,
      "Slack couldn't open the form in time. Please try again.",
      { cause: err },
    );
  }
  if (!viewId) throw new Error("views.open returned no view id");
  let view: ModalView;
  try {
    view = await build();
  } catch (err) {
    deps.logger.info({ err }, "form not opened");
    view = buildNoticeModal(title, plainMessage(err));
  }
  try {
    await client.views.update({ view_id: viewId, view });
  } catch (err) {
    // The user closed the placeholder meanwhile: nothing is waiting for this view.
    deps.logger.info({ err }, "modal gone before it was filled");
  }
}

/** The team of an interactive payload (a workspace install; org installs name the user's team). */
export function teamOf(body: {
  team?: { id: string } | null;
  user?: { team_id?: string };
}): string {
  const team = body.team?.id ?? body.user?.team_id;
  if (!team) throw new Error("interactive payload without a team");
  return team;
}

/**
 * A client for messages only one person may read (tokens, organizer-only links and passcodes):
 * WebClient logs every request body at debug level, so this one keeps its debug and info lines
 * to itself. Warnings and errors, which never hold the body, still reach the app's log.
 */
export function quietClient(deps: Deps, client: WebClient): WebClient {
  const log = deps.logger.child({ component: "slack-private-post" });
  return new webApi.WebClient(client.token, {
    slackApiUrl: client.slackApiUrl,
    logger: {
      debug: () => {},
      info: () => {},
      warn: (...msg: unknown[]) => log.warn(msg.map(String).join(" ")),
      error: (...msg: unknown[]) => log.error(msg.map(String).join(" ")),
      setLevel: () => {},
      getLevel: () => webApi.LogLevel.WARN,
      setName: () => {},
    },
  });
}

/**
 * Tells the organizer something only they may see: ephemeral in the channel they used, else a
 * DM from the app (chat.postMessage to the user id opens the app's DM).
 */
export async function tellUser(
  client: WebClient,
  user: string,
  message: { text: string; blocks?: KnownBlock[] },
  channel?: string,
): Promise<void> {
  if (channel && !channel.startsWith("D")) {
    try {
      await client.chat.postEphemeral({
        channel,
        user,
        text: message.text,
        ...(message.blocks ? { blocks: message.blocks } : {}),
      });
      return;
    } catch {
      // Not in that channel any more (or the app is not): the DM below still reaches them.
    }
  }
  await client.chat.postMessage({
    channel: user,
    text: message.text,
    ...(message.blocks ? { blocks: message.blocks } : {}),
  });
}

/**
 * The words a user reads for an error. A relay catalog error also names itself: several catalog
 * rows share a meaning (e.g. three "listener out of date" errors), and the name is what the relay
 * admin looks up.
 */
export function plainMessage(err: unknown): string {
  if (err instanceof RelayError && err.known && err.errorName) {
    return `${err.userMessage} (Relay error: ${err.errorName}.)`;
  }
  return userMessageOf(err);
}

/** Logs an error and tells the user its plain sentence; never throws. */
export async function reportFailure(
  deps: Deps,
  client: WebClient,
  user: string,
  err: unknown,
  what: string,
  channel?: string,
): Promise<void> {
  deps.logger.error({ err, what }, "organizer flow failed");
  try {
    await tellUser(client, user, { text: plainMessage(err) }, channel);
  } catch (e) {
    deps.logger.warn({ err: e }, "could not tell the user");
  }
}

/** The stored record of an event this user organizes; a plain refusal otherwise. */
export async function ownedRecord(
  deps: Deps,
  team: string,
  user: string,
  eventId: string,
): Promise<EventRecord> {
  const record = await deps.store.events.get(team, eventId);
  if (!record) {
    throw new UserFacingError(
      USER_ERROR_CODES.notFound,
      "On Air doesn't know that event. Run `/onair list` to see the events you scheduled here.",
    );
  }
  if (record.organizer !== user) {
    throw new UserFacingError(
      USER_ERROR_CODES.notAllowed,
      `Only the event's organizer, <@${record.organizer}>, can change it. Ask them to.`,
    );
  }
  if (record.cancelled) {
    throw new UserFacingError(
      USER_ERROR_CODES.notFound,
      "That event was cancelled. Schedule a new one with `/onair schedule`.",
    );
  }
  return record;
}

/** The organizer's link, as stored when they scheduled it. */
export async function organizerLink(
  deps: Deps,
  team: string,
  record: EventRecord,
): Promise<UserLink> {
  const link = await deps.store.users.get(team, record.organizer);
  if (!link) {
    throw new UserFacingError(
      USER_ERROR_CODES.notLinked,
      "Your events account is no longer linked. Run `/onair link`, then try again.",
    );
  }
  return link;
}

/** What the record keeps of an event for App Home and naming: title and when it happens. */
export function timesOf(event: Event): {
  title: string;
  start: number;
  end: number;
  lastEnd: number;
} {
  return {
    title: event.title,
    start: event.start,
    end: event.end,
    // A series is over when its last occurrence is.
    lastEnd: Math.max(event.end, event.recurrenceEnd || 0),
  };
}

/**
 * Changes a few fields of the stored record under the event's lock, read just before the write:
 * the live area updates the same record (subscriptions, cards), and a copy read before a slow
 * upstream call, or a write racing a notify, would undo that.
 */
export async function patchRecord(
  deps: Deps,
  team: string,
  eventId: string,
  patch: Partial<EventRecord>,
  lock: EventLockOptions = {},
): Promise<void> {
  await withEventLock(
    deps,
    team,
    eventId,
    async () => {
      const current = await deps.store.events.get(team, eventId);
      if (!current) return;
      await deps.store.events.put({ ...current, ...patch, updatedAt: deps.now() });
    },
    lock,
  );
}

/** GET with the organizer's token; the record learns the fresh title and times. */
export async function fetchEvent(
  deps: Deps,
  team: string,
  link: UserLink,
  record: EventRecord,
): Promise<Event> {
  const event = await withUserToken(deps, team, link, (t) =>
    deps.events.getEvent(t.accessToken, t.userId, record.eventId),
  );
  const known = timesOf(event);
  if (Object.entries(known).some(([k, v]) => record[k] !== v)) {
    // Only a cache of the event's times: when someone holds the record, the next read refreshes
    // it instead of making this one wait.
    await patchRecord(deps, team, record.eventId, known, { waitMs: 0 }).catch((err: unknown) => {
      if (!(err instanceof EventBusyError)) throw err;
    });
  }
  return event;
}

/**
 * Runs a live-area hook after the upstream change is done: its failure must not read as if the
 * change failed, so it is logged and returned for the user's message instead of thrown.
 */
export async function afterChange(
  deps: Deps,
  what: string,
  fn: () => Promise<void>,
): Promise<unknown> {
  try {
    await fn();
    return undefined;
  } catch (err) {
    deps.logger.error({ err, what }, "live follow-up failed");
    return err;
  }
}

/**
 * Records the action in the store and, when the team has an audit channel, posts it there
 * through the bulk client. `details` must never hold a token (the store scrubs them anyway).
 */
export async function audit(
  deps: Deps,
  team: string,
  entry: {
    actor: string;
    action: string;
    target?: string;
    details?: Record<string, string | number | boolean | null>;
  },
  summary: string,
): Promise<void> {
  await deps.store.audit.append(team, { ...entry, at: deps.now() });
  const settings = await effectiveSettings(deps, team);
  if (!settings.auditChannel) return;
  try {
    const bulk = await deps.bulkClient(team);
    await bulk.chat.postMessage({ channel: settings.auditChannel, text: summary.slice(0, 3000) });
  } catch (err) {
    // The record is stored; a channel that refuses the post must not undo the action.
    deps.logger.warn({ err, action: entry.action }, "audit channel post failed");
  }
}
