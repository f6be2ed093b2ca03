import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import type { EventRecord } from "../../store/index.ts";
import type { Event } from "../../upstream/events/schemas.ts";
import {
  effectiveSettings,
  requireAllowed,
  requireLinked,
  slackProfile,
  withUserToken,
} from "../access.ts";
import {
  buildEventForm,
  DEFAULT_REMINDERS,
  type EventFormValues,
  PEOPLE_PICKER_MAX,
  recurrencePreview,
} from "../blocks/event-form.ts";
import type { KnownBlock, ModalView } from "../blocks/kit.ts";
import { buildOrganizerDetails } from "../blocks/organizer-details.ts";
import {
  afterChange,
  audit,
  decodeMeta,
  encodeMeta,
  type FlowMeta,
  fetchEvent,
  openThenFill,
  organizerLink,
  ownedRecord,
  patchRecord,
  plainMessage,
  quietClient,
  reportFailure,
  tellUser,
  timesOf,
} from "./common.ts";
import {
  diffEvent,
  readEventForm,
  toEventInput,
  type ViewStateValues,
  validateEventForm,
  valuesFromEvent,
} from "./form.ts";
import { publishHome } from "./home.ts";
import { EVENT_BLOCKS } from "./ids.ts";
import { live } from "./live.ts";
import { emailsOf, emailsToSlackUsers, slackUsersToPeople } from "./people.ts";
import { DEFAULT_ZONE, knownZone, zoneChoices } from "./zones.ts";

const HOUR = 3_600_000;

export interface OpenArgs {
  team: string;
  user: string;
  triggerId: string;
  channel?: string;
}

export async function openScheduleForm(
  deps: Deps,
  client: WebClient,
  args: OpenArgs,
): Promise<void> {
  await openThenFill(deps, client, args.triggerId, "Schedule an event", async () => {
    const settings = await effectiveSettings(deps, args.team);
    await requireAllowed(client, settings, args.user, "schedule");
    const profile = await slackProfile(client, args.user);
    await requireLinked(deps, client, args.team, args.user);
    const zone = knownZone(profile.tz) ? profile.tz : DEFAULT_ZONE;
    // Next full hour, one hour long: a sensible start the organizer adjusts.
    const start = Math.ceil((deps.now() + HOUR / 2) / HOUR) * HOUR;
    const meta: FlowMeta = args.channel ? { channel: args.channel } : {};
    return buildEventForm({
      mode: "create",
      privateMetadata: encodeMeta(meta),
      zones: zoneChoices([zone]),
      values: {
        timezone: zone,
        start,
        end: start + HOUR,
        recurrence: "NONE",
        frequency: 1,
        reminders: [...DEFAULT_REMINDERS],
      },
    });
  });
}

export async function openEditForm(
  deps: Deps,
  client: WebClient,
  args: OpenArgs & { eventId: string },
): Promise<void> {
  await openThenFill(deps, client, args.triggerId, "Edit event", async () => {
    const record = await ownedRecord(deps, args.team, args.user, args.eventId);
    const link = await organizerLink(deps, args.team, record);
    const event = await fetchEvent(deps, args.team, link, record);
    const values = valuesFromEvent(event);
    const tooMany: { panelists?: number; moderators?: number } = {};
    const people = { panelists: true, moderators: true };
    for (const k of ["panelists", "moderators"] as const) {
      const emails = emailsOf(event[k]);
      if (emails.length > PEOPLE_PICKER_MAX) {
        tooMany[k] = emails.length;
        people[k] = false;
      } else {
        values[k] = (await emailsToSlackUsers(client, emails)).users;
      }
    }
    const notes: string[] = [];
    if (Array.from(event.title).length > 200) {
      notes.push(
        `:warning: The title is ${Array.from(event.title).length} characters long; it is shortened here. Shorten it to 200 characters to save.`,
      );
    }
    const meta: FlowMeta = {
      eventId: event.id,
      originalStart: event.start,
      people,
      ...(args.channel ? { channel: args.channel } : {}),
    };
    return buildEventForm({
      mode: "edit",
      privateMetadata: encodeMeta(meta),
      zones: zoneChoices([event.timezone]),
      values,
      tooManyPeople: tooMany,
      notes,
    });
  });
}

/** A dispatch_action on start, zone or recurrence: rewrite the preview in place. */
export async function refreshPreview(
  client: WebClient,
  view: {
    id: string;
    hash: string;
    callback_id: string;
    private_metadata: string;
    title: unknown;
    submit?: unknown;
    close?: unknown;
    blocks: unknown[];
    state: { values: unknown };
  },
): Promise<void> {
  const values = readEventForm(view.state.values as ViewStateValues);
  const blocks = (view.blocks as KnownBlock[]).map((b) =>
    b.block_id === EVENT_BLOCKS.preview
      ? ({
          type: "context",
          block_id: EVENT_BLOCKS.preview,
          elements: [{ type: "mrkdwn", text: recurrencePreview(values) }],
        } as KnownBlock)
      : b,
  );
  const next = {
    type: "modal",
    callback_id: view.callback_id,
    private_metadata: view.private_metadata,
    title: view.title,
    ...(view.submit ? { submit: view.submit } : {}),
    ...(view.close ? { close: view.close } : {}),
    blocks,
  } as ModalView;
  try {
    await client.views.update({ view_id: view.id, hash: view.hash, view: next });
  } catch (err) {
    // hash_conflict: the user typed on; the next change refreshes the preview again.
    if (!(err && typeof err === "object" && "data" in err)) throw err;
  }
}

export type SubmitResult = { errors: Record<string, string> } | { run: () => Promise<void> };

/** Validates synchronously (inline errors keep the modal open), then returns the slow work. */
export function submitEventForm(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; privateMetadata: string; values: ViewStateValues },
): SubmitResult {
  const meta = decodeMeta(args.privateMetadata);
  const values = readEventForm(args.values);
  const errors = validateEventForm(values, {
    now: deps.now(),
    ...(meta.originalStart !== undefined ? { originalStart: meta.originalStart } : {}),
  });
  if (Object.keys(errors).length) return { errors };
  const run = meta.eventId
    ? () => saveEdit(deps, client, args.team, args.user, meta, values)
    : () => createEvent(deps, client, args.team, args.user, meta, values);
  return {
    run: () =>
      run().catch((err: unknown) =>
        reportFailure(
          deps,
          client,
          args.user,
          err,
          meta.eventId ? "edit" : "schedule",
          meta.channel,
        ),
      ),
  };
}

function missingNote(missing: string[]): string {
  return missing.length
    ? ` ${missing.map((u) => `<@${u}>`).join(", ")} could not be invited: no e-mail on their Slack profile.`
    : "";
}

async function createEvent(
  deps: Deps,
  client: WebClient,
  team: string,
  user: string,
  meta: FlowMeta,
  values: EventFormValues,
): Promise<void> {
  const settings = await effectiveSettings(deps, team);
  await requireAllowed(client, settings, user, "schedule");
  const link = await requireLinked(deps, client, team, user);
  const [panelists, moderators] = await Promise.all([
    slackUsersToPeople(client, values.panelists ?? []),
    slackUsersToPeople(client, values.moderators ?? []),
  ]);
  const body = toEventInput(
    values,
    { panelists: panelists.people, moderators: moderators.people },
    DEFAULT_ZONE,
  );
  const event: Event = await withUserToken(deps, team, link, async (t) => {
    const { id } = await deps.events.createEvent(t.accessToken, t.userId, body);
    return deps.events.getEvent(t.accessToken, t.userId, id);
  });
  const record: EventRecord = {
    team,
    eventId: event.id,
    organizer: user,
    upstreamUserId: link.userId,
    ...timesOf(event),
    subscriptions: [],
    cards: {},
    instances: {},
    createdAt: deps.now(),
  };
  await deps.store.events.put(record);
  const note = missingNote([...panelists.missing, ...moderators.missing]);
  const heading = `:white_check_mark: Scheduled.${note}${values.channel ? ` Its live card goes to <#${values.channel}>.` : ""}`;
  await tellUser(
    quietClient(deps, client),
    user,
    buildOrganizerDetails(event, heading),
    meta.channel,
  );
  if (values.channel) {
    const channel = values.channel;
    const failed = await afterChange(deps, "subscribe", () =>
      live.subscribeChannel(deps, {
        team,
        eventId: event.id,
        channel,
        user,
        remindersMin: values.reminders ?? [...DEFAULT_REMINDERS],
        ...(values.noise ? { noise: values.noise } : {}),
      }),
    );
    if (failed) {
      await tellUser(
        client,
        user,
        {
          text: `The event is scheduled, but <#${channel}> did not get its card: ${plainMessage(failed)} Try \`/onair notify\` later.`,
        },
        meta.channel,
      );
    }
  }
  await audit(
    deps,
    team,
    {
      actor: user,
      action: "event.schedule",
      target: event.id,
      details: {
        title: event.title.slice(0, 200),
        start: event.start,
        channel: values.channel ?? null,
      },
    },
    `<@${user}> scheduled *${event.title.slice(0, 200)}* (\`${event.id}\`).`,
  );
  await publishHome(deps, client, team, user);
}

async function saveEdit(
  deps: Deps,
  client: WebClient,
  team: string,
  user: string,
  meta: FlowMeta,
  values: EventFormValues,
): Promise<void> {
  const record = await ownedRecord(deps, team, user, meta.eventId ?? "");
  const link = await organizerLink(deps, team, record);
  const before = await fetchEvent(deps, team, link, record);
  const people: Parameters<typeof diffEvent>[2] = {};
  const missing: string[] = [];
  for (const k of ["panelists", "moderators"] as const) {
    if (meta.people?.[k] === false || values[k] === undefined) continue;
    const mapped = await slackUsersToPeople(client, values[k]);
    missing.push(...mapped.missing);
    // Addresses the picker could not show (no Slack user) are kept, not dropped by the edit.
    const shown = new Set(mapped.people.map((p) => p.email));
    const hidden = emailsOf(before[k]).filter((e) => !shown.has(e));
    const unknown = (await emailsToSlackUsers(client, hidden)).unknown;
    people[k] = [...mapped.people, ...unknown.map((email) => ({ email }))];
  }
  const patch = diffEvent(before, values, people);
  const changed = Object.keys(patch);
  if (changed.length === 0) {
    await tellUser(
      client,
      user,
      { text: "Nothing changed, so nothing was sent to the events service." },
      meta.channel,
    );
    return;
  }
  const after = await withUserToken(deps, team, link, async (t) => {
    await deps.events.editEvent(t.accessToken, t.userId, record.eventId, patch);
    return deps.events.getEvent(t.accessToken, t.userId, record.eventId);
  });
  await patchRecord(deps, team, record.eventId, timesOf(after));
  const stale = await afterChange(deps, "edit follow-up", () =>
    live.onEventEdited(deps, team, record.eventId),
  );
  await tellUser(
    quietClient(deps, client),
    user,
    buildOrganizerDetails(
      after,
      `:pencil2: Saved: ${changed.join(", ")}.${missingNote(missing)}${stale ? " Its channel cards may show the old details for now." : ""}`,
    ),
    meta.channel,
  );
  await audit(
    deps,
    team,
    {
      actor: user,
      action: "event.edit",
      target: record.eventId,
      details: { fields: changed.join(",") },
    },
    `<@${user}> edited *${after.title.slice(0, 200)}* (\`${record.eventId}\`): ${changed.join(", ")}.`,
  );
  await publishHome(deps, client, team, user);
}
