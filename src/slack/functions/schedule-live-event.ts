import type { App } from "@slack/bolt";
import { buildOrganizerDetails } from "../../blocks/organizer-details.ts";
import type { Deps } from "../../deps.ts";
import { effectiveSettings, requireAllowed, requireLinked } from "../../domain/access.ts";
import { isUserMistake, plainMessage } from "../../domain/errors.ts";
import { DEFAULT_REMINDERS, type EventDraft, TITLE_MAX } from "../../domain/event-draft.ts";
import { requireLiveChannel } from "../../domain/notify.ts";
import { scheduleEvent } from "../../domain/schedule.ts";
import { DEFAULT_ZONE, knownZone } from "../../domain/zones.ts";
import type { ListenerKit } from "../kit.ts";
import { quietClient, tellUser } from "../reply.ts";
import { STEPS } from "./definitions.ts";
import type { StepOutcome } from "./run.ts";
import { handleStep, type StepRun } from "./step.ts";

/**
 * `schedule_live_event`: the workflow's organizer input schedules the event, under the same
 * policy as `/onair schedule` (who may schedule; an events account under their Slack e-mail),
 * through the same domain action: the channel input gets the live card and the reminders. A
 * refusal or a bad input fails the step with one sentence naming the input, before anything is
 * made. The outputs are the event id, the attendees' join link and the start: nothing secret
 * (a workflow's outputs show in its activity).
 */

const fail = (error: string): StepOutcome => ({ error });

/** The inputs as a draft, or the sentence naming the input at fault. */
function draftOf(deps: Deps, inputs: Readonly<Record<string, unknown>>): EventDraft | StepOutcome {
  const title = typeof inputs.title === "string" ? inputs.title.trim() : "";
  if (title === "") return fail("The title input is empty: give the event a title.");
  const length = Array.from(title).length;
  if (length > TITLE_MAX) {
    return fail(`The title input has ${length} characters; keep it to ${TITLE_MAX}.`);
  }
  const start = inputs.start;
  const end = inputs.end;
  if (typeof start !== "number" || !Number.isFinite(start)) {
    return fail("The start input is not a time: pick when the event starts.");
  }
  if (typeof end !== "number" || !Number.isFinite(end)) {
    return fail("The end input is not a time: pick when the event ends.");
  }
  if (start * 1000 < deps.now()) {
    return fail("The start input is in the past: pick a time from now on.");
  }
  if (end <= start) return fail("The end input is not after the start: pick a later end.");
  const description = typeof inputs.description === "string" ? inputs.description : "";
  const channel = typeof inputs.channel === "string" && inputs.channel ? inputs.channel : undefined;
  return {
    title,
    ...(description ? { description } : {}),
    start: start * 1000,
    end: end * 1000,
    recurrence: "NONE",
    frequency: 1,
    reminders: [...DEFAULT_REMINDERS],
    ...(channel ? { channel } : {}),
  };
}

/**
 * The first sentence of a refusal the slash command would show, as plain text: a workflow's
 * activity shows no mrkdwn (a user group mention reads as the group's id).
 */
function firstSentence(text: string): string {
  const plain = text
    .replace(/<!subteam\^([A-Z0-9]+)(?:\|[^>]*)?>/g, "user group $1")
    .replaceAll("`", "");
  return plain.split(/(?<=[.!?])\s+/)[0] ?? plain;
}

/** A refusal of the domain, said in one sentence as the input it is about. */
async function asInput<T>(input: string, check: () => Promise<T>): Promise<T | StepOutcome> {
  try {
    return await check();
  } catch (err) {
    if (!isUserMistake(err)) throw err;
    return fail(`The ${input} input: ${firstSentence(plainMessage(err))}`);
  }
}

const isOutcome = (v: unknown): v is StepOutcome =>
  typeof v === "object" && v !== null && ("error" in v || "outputs" in v);

async function schedule(deps: Deps, run: StepRun): Promise<StepOutcome> {
  const draft = draftOf(deps, run.inputs);
  if (isOutcome(draft)) return draft;
  const organizer = typeof run.inputs.organizer === "string" ? run.inputs.organizer : "";
  if (!organizer) return fail("The organizer input is empty: name who schedules the event.");
  const actor = run.actorFor(organizer);
  // Checked here, each under its input's name, before anything is made; scheduleEvent checks
  // the same again as it always does.
  const allowed = await asInput("organizer", async () => {
    await requireAllowed(actor, await effectiveSettings(deps, run.team), "schedule");
    await requireLinked(deps, actor);
    const profile = await actor.directory.profile(organizer);
    return knownZone(profile.tz) ? profile.tz : DEFAULT_ZONE;
  });
  if (isOutcome(allowed)) return allowed;
  const channel = draft.channel;
  if (channel) {
    const reach = await asInput("channel", () => requireLiveChannel(actor, channel));
    if (isOutcome(reach)) return reach;
  }
  const done = await scheduleEvent(deps, actor, { ...draft, timezone: allowed });
  const event = done.event;
  // As after the form: the organizer alone gets the links and passcodes, in their DM.
  const client = await deps.bulkClient(run.team);
  await tellUser(
    quietClient(deps, client),
    organizer,
    buildOrganizerDetails(event, ":white_check_mark: A workflow scheduled this event for you."),
  ).catch((err: unknown) =>
    deps.logger.warn({ err }, "schedule_live_event: the organizer's details were not sent"),
  );
  const join = event.attendeeUrl;
  return {
    outputs: {
      event_id: event.id,
      join_url: /^https?:\/\//i.test(join) ? join : `https://${join}`,
      start: Math.floor(event.start / 1000),
    },
  };
}

export function register(app: App, kit: ListenerKit): void {
  app.function(STEPS.schedule, async (args) => {
    await handleStep(kit.deps, STEPS.schedule, args, (run) => schedule(kit.deps, run));
  });
}
