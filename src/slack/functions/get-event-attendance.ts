import type { App } from "@slack/bolt";
import type { Deps } from "../../deps.ts";
import { truncate } from "../../domain/text.ts";
import type { ListenerKit } from "../kit.ts";
import { STEPS } from "./definitions.ts";
import type { StepOutcome } from "./run.ts";
import { handleStep, type StepRun } from "./step.ts";

/**
 * `get_event_attendance`: the current instance's counts for an event of this workspace, as the
 * card shows them: peak, unique attendees, who was still in at the end (or now, while it runs),
 * and the state. Counts only: no name or e-mail ever reaches a workflow.
 */

async function attendance(deps: Deps, run: StepRun): Promise<StepOutcome> {
  const eventId = typeof run.inputs.event_id === "string" ? run.inputs.event_id.trim() : "";
  if (eventId === "") return { error: "The event_id input is empty: give the event's ID." };
  const record = await deps.store.events.get(run.team, eventId);
  if (!record) {
    return {
      error: `The event_id input names no event On Air knows in this workspace (${truncate(eventId, 80)}): check the ID with /onair list.`,
    };
  }
  const figures = await deps.live.figures(run.team, record.eventId);
  const state = record.cancelled
    ? "CANCELLED"
    : figures?.endedAt !== undefined
      ? "ENDED"
      : (figures?.state ?? "NOT_STARTED");
  return {
    outputs: {
      peak: figures?.peak ?? 0,
      unique: figures?.unique ?? 0,
      present_at_end: figures?.present ?? 0,
      state,
    },
  };
}

export function register(app: App, kit: ListenerKit): void {
  app.function(STEPS.attendance, async (args) => {
    await handleStep(kit.deps, STEPS.attendance, args, (run) => attendance(kit.deps, run));
  });
}
