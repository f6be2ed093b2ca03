import { createHash } from "node:crypto";
import { z } from "zod";
import type { Deps } from "../../deps.ts";
import { defineRepository } from "../../store/index.ts";

/**
 * One submission per view state. Slack's clients send a submission again when they did not see
 * the answer in time (a flaky network), and a double click can send two at once; both carry the
 * same view id and hash (the hash changes whenever the view does). The first to claim the pair in
 * the shared store acts; every repeat, on any instance sharing the store, is answered without
 * acting: no second event, token, cancel or settings write.
 */

/**
 * How long a view state is remembered. A repeat comes within seconds; a view stays open for hours
 * at most, and a claim costs one small key.
 */
export const SUBMISSION_MEMORY_MS = 24 * 3_600_000;

/** What Slack sends of the submitted view; a forged one may lack any of it. */
export interface SubmittedView {
  id?: string | undefined;
  hash?: string | undefined;
}

/**
 * The claims as a repository of their own, so the store's `deleteTeam` removes a workspace's claims
 * with the rest of its data when it uninstalls (they hold only a hash, but an uninstall leaves
 * nothing of the team behind).
 */
export const viewOnceRepo = defineRepository({
  prefix: "view-once",
  schema: z.unknown(),
  team: "key",
});

/** The store key: bounded in length whatever a forged view id or hash holds. */
export function submissionKey(team: string, view: SubmittedView, part = ""): string {
  const digest = createHash("sha256")
    .update(`${view.id ?? ""}\0${view.hash ?? ""}\0${part}`)
    .digest("hex")
    .slice(0, 40);
  return `${viewOnceRepo.prefix}:${team}:${digest}`;
}

export type Claim = "first" | "repeat" | "unavailable";

/**
 * "first" for exactly one submission of this view state across every instance, at once or later;
 * "repeat" for the others; "unavailable" when the store did not answer (nothing is done then, and
 * the person is asked to press again). `part` tells apart presses of different buttons in one
 * view state.
 */
export async function claimSubmission(
  deps: Pick<Deps, "store" | "logger">,
  team: string,
  view: SubmittedView,
  part = "",
): Promise<Claim> {
  try {
    const first = await deps.store.claimOnce(submissionKey(team, view, part), SUBMISSION_MEMORY_MS);
    if (!first)
      deps.logger.info({ view: view.id, part }, "a repeated submission; answered, not acted on");
    return first ? "first" : "repeat";
  } catch (err) {
    deps.logger.warn({ err }, "could not record a submission; nothing was done");
    return "unavailable";
  }
}

/** Said under a field when the claim could not be recorded. */
export function unavailableText(press: string): string {
  return `On Air could not record this just now, so nothing was done. Press ${press} again in a moment.`;
}
