import type { AllMiddlewareArgs, App, SlackViewMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { buildEventForm } from "../../blocks/event-form.ts";
import { draftErrorsToBlocks, readEventForm } from "../../blocks/event-form-read.ts";
import type { KnownBlock } from "../../blocks/kit.ts";
import { buildOrganizerDetails } from "../../blocks/organizer-details.ts";
import type { ViewStateValues } from "../../blocks/view-state.ts";
import type { Actor } from "../../domain/directory.ts";
import { saveEdit, startEditing } from "../../domain/edit.ts";
import { isUserMistake, plainMessage } from "../../domain/errors.ts";
import { type EventDraft, validateDraft } from "../../domain/event-draft.ts";
import { fieldTextOf, requireLiveChannel } from "../../domain/notify.ts";
import { scheduleEvent, startScheduling } from "../../domain/schedule.ts";
import { escapeMrkdwn, truncate } from "../../domain/text.ts";
import { formatInZone } from "../../domain/time.ts";
import { zoneChoices } from "../../domain/zones.ts";
import { EVENT_FIELDS, VIEWS } from "../../ids.ts";
import { UpstreamError } from "../../upstream/errors.ts";
import { reportFailure } from "../failure.ts";
import { publishHome } from "../home.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { decodeMeta, encodeMeta, type FlowMeta, openThenFill } from "../modal.ts";
import { type Message, quietClient, tellUser } from "../reply.ts";
import { claimSubmission, unavailableText } from "./once.ts";

/** The schedule form: opened by `/onair schedule`, the global shortcut and App Home. */
export async function openScheduleForm(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
  channel?: string,
  text = "",
): Promise<void> {
  await openThenFill(kit.deps, client, triggerId, "Schedule an event", async () => {
    const draft = await startScheduling(kit.deps, actor, text);
    const meta: FlowMeta = channel ? { channel } : {};
    return buildEventForm({
      mode: "create",
      privateMetadata: encodeMeta(meta),
      zones: zoneChoices([draft.timezone]),
      values: draft,
      ...(text.trim() ? { notes: [typedNote(text, draft)] } : {}),
    });
  });
}

/** Says what the form took from the command's text, so nothing typed is silently dropped. */
function typedNote(text: string, draft: EventDraft): string {
  const title = draft.title ? `the title “${escapeMrkdwn(truncate(draft.title, 200))}”` : "";
  const typed = `“${escapeMrkdwn(truncate(text.trim(), 200))}”`;
  const start =
    draft.start !== undefined && draft.timezone
      ? `the start ${formatInZone(draft.start, draft.timezone)} (${escapeMrkdwn(draft.timezone)})`
      : "";
  const taken = [title, start].filter(Boolean);
  if (taken.length === 0)
    return `:memo: From ${typed} nothing could be read; fill in the form below.`;
  return `:memo: From ${typed}: ${taken.join(" and ")}${start ? "" : "; pick the start below"}. Check ${taken.length > 1 ? "them" : "it"} before you press *Schedule*.`;
}

/** The edit form: opened by `/onair edit`, the card's Edit button and the list's menu. */
export async function openEditForm(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
  eventId: string,
  channel?: string,
): Promise<void> {
  await openThenFill(kit.deps, client, triggerId, "Edit event", async () => {
    const start = await startEditing(kit.deps, actor, eventId);
    const notes = start.longTitle
      ? [
          `:warning: The title is ${Array.from(start.event.title).length} characters long; it is shortened here. Shorten it to 200 characters to save.`,
        ]
      : [];
    const meta: FlowMeta = {
      eventId: start.event.id,
      originalStart: start.event.start,
      people: start.people,
      ...(channel ? { channel } : {}),
    };
    return buildEventForm({
      mode: "edit",
      privateMetadata: encodeMeta(meta),
      zones: zoneChoices([start.event.timezone]),
      values: start.draft,
      tooManyPeople: start.tooManyPeople,
      notes,
    });
  });
}

/** How much of a description the confirmation quotes (a section holds 3,000 characters). */
const DESCRIPTION_SHOWN = 1_500;

/**
 * The confirmation quotes the description the organizer just typed, escaped (their text is never
 * mrkdwn), under the title. Details that already carry it are left as they are.
 */
function withDescription(details: Message, description: string): Message {
  const text = escapeMrkdwn(truncate(description.trim(), DESCRIPTION_SHOWN));
  const blocks = details.blocks ?? [];
  if (text === "" || JSON.stringify(blocks).includes(JSON.stringify(text).slice(1, -1))) {
    return details;
  }
  const quote: KnownBlock = {
    type: "section",
    // verbatim: a URL in it stays the organizer's text, as everywhere their text is shown.
    text: { type: "mrkdwn", text: `*Description:*\n${text}`, verbatim: true },
  };
  const header = blocks.findIndex((b) => b.type === "header");
  return {
    ...details,
    blocks: [...blocks.slice(0, header + 1), quote, ...blocks.slice(header + 1)],
  };
}

function missingNote(missing: readonly string[]): string {
  return missing.length
    ? ` ${missing.map((u) => `<@${u}>`).join(", ")} could not be invited: no e-mail on their Slack profile.`
    : "";
}

async function schedule(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  meta: FlowMeta,
  draft: ReturnType<typeof readEventForm>,
): Promise<void> {
  const { deps } = kit;
  const done = await scheduleEvent(deps, actor, draft, meta.channel);
  const ch = done.channel;
  const heading = `:white_check_mark: Scheduled.${missingNote(done.missing)}${ch && !ch.failed ? ` Its live card goes to <#${ch.id}>.` : ""}`;
  await tellUser(
    quietClient(deps, client),
    actor.user,
    withDescription(buildOrganizerDetails(done.event, heading), done.event.description),
    meta.channel,
  );
  if (ch?.failed) {
    await tellUser(
      client,
      actor.user,
      {
        text: `The event is scheduled, but <#${ch.id}> did not get its card: ${plainMessage(ch.failed)} Try \`/onair notify\` later.`,
      },
      meta.channel,
    );
  }
  await publishHome(deps, client, actor);
}

async function edit(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  meta: FlowMeta,
  draft: ReturnType<typeof readEventForm>,
): Promise<void> {
  const { deps } = kit;
  const out = await saveEdit(deps, actor, meta.eventId ?? "", draft, meta.people);
  if (out.changed.length === 0) {
    await tellUser(
      client,
      actor.user,
      { text: "Nothing changed, so nothing was sent to the events service." },
      meta.channel,
    );
    return;
  }
  const missing = "missing" in out ? out.missing : [];
  const stale = "stale" in out && out.stale;
  const saved = `:pencil2: Saved: ${out.changed.join(", ")}.${missingNote(missing)}${stale ? " Its channel cards may show the old details for now." : ""}`;
  const organizer = "organizer" in out ? out.organizer : actor.user;
  if (organizer === actor.user) {
    await tellUser(
      quietClient(deps, client),
      actor.user,
      buildOrganizerDetails(out.event, saved),
      meta.channel,
    );
  } else {
    // An admin edited someone else's event: the links and passcodes stay the organizer's (as
    // /onair show refuses them to admins); the organizer hears of the change, with them.
    await tellUser(
      client,
      actor.user,
      {
        text: `${saved} Its join links and passcodes go only to its organizer, <@${organizer}>, who has been sent the updated details.`,
      },
      meta.channel,
    );
    await tellUser(
      quietClient(deps, client),
      organizer,
      buildOrganizerDetails(
        out.event,
        `:pencil2: <@${actor.user}> changed your event: ${out.changed.join(", ")}. Its details as they are now:`,
      ),
    );
  }
  await publishHome(deps, client, actor);
}

/** A view_submission's trigger_id (Slack sends one; a view_closed has none). */
function triggerOf(body: SlackViewMiddlewareArgs["body"]): string {
  return "trigger_id" in body && typeof body.trigger_id === "string" ? body.trigger_id : "";
}

/** The form again, as it was submitted, with why nothing was saved at the top. */
async function reopenForm(
  client: WebClient,
  triggerId: string,
  privateMetadata: string,
  input: { mode: "create" | "edit"; draft: EventDraft; reason: string },
): Promise<void> {
  const press = input.mode === "create" ? "Schedule" : "Save changes";
  await client.views.open({
    trigger_id: triggerId,
    view: buildEventForm({
      mode: input.mode,
      privateMetadata,
      zones: zoneChoices([input.draft.timezone]),
      values: input.draft,
      notes: [
        `:warning: Nothing was saved: ${input.reason} Everything you typed is still here; press *${press}* to try again.`,
      ],
    }),
  });
}

/** Submit: inline errors keep the modal open; otherwise ack, then create or save. */
export function register(app: App, kit: ListenerKit): void {
  app.view(
    VIEWS.event,
    async ({ ack, body, view, client, context }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
      const meta = decodeMeta(view.private_metadata);
      const draft = readEventForm((view.state?.values ?? {}) as ViewStateValues);
      const errors = validateDraft(draft, {
        now: kit.deps.now(),
        ...(meta.originalStart !== undefined ? { originalStart: meta.originalStart } : {}),
      });
      if (Object.keys(errors).length) {
        await ack({ response_action: "errors", errors: draftErrorsToBlocks(errors) });
        return;
      }
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      if (!meta.eventId && draft.channel) {
        // Said under the field, with the form still open: who may post where.
        try {
          await requireLiveChannel(actor, draft.channel, meta.channel);
        } catch (err) {
          if (!isUserMistake(err)) throw err;
          await ack({
            response_action: "errors",
            errors: { [EVENT_FIELDS.channel]: fieldTextOf(err) },
          });
          return;
        }
      }
      // After every check that answers the same for the same view state: a repeat of this
      // submission is answered as the first was (closed) and creates or saves nothing.
      const claim = await claimSubmission(kit.deps, actor.team, view);
      if (claim === "unavailable") {
        await ack({
          response_action: "errors",
          errors: {
            [EVENT_FIELDS.title]: unavailableText(meta.eventId ? "Save changes" : "Schedule"),
          },
        });
        return;
      }
      await ack();
      if (claim === "repeat") return;
      const run = meta.eventId ? edit : schedule;
      await run(kit, client, actor, meta, draft).catch(async (err: unknown) => {
        // The events service failed (a 503, a timeout): the form comes back with everything
        // typed and the reason, on the submission's own trigger (valid 3 s, once).
        if (err instanceof UpstreamError) {
          const back = await reopenForm(client, triggerOf(body), view.private_metadata, {
            mode: meta.eventId ? "edit" : "create",
            draft,
            reason: plainMessage(err),
          }).then(
            () => true,
            (e: unknown) => {
              kit.deps.logger.info({ err: e }, "the form could not be reopened after a failure");
              return false;
            },
          );
          if (back) {
            kit.deps.logger.info(
              { err },
              "upstream failed at submit; the form is back for a retry",
            );
            return;
          }
        }
        await reportFailure(kit.deps, meta.eventId ? "edit" : "schedule", err, (text) =>
          tellUser(client, actor.user, { text }, meta.channel),
        );
      });
    },
  );
}
