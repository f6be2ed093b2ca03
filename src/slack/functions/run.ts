import { WebClient } from "@slack/web-api";
import { z } from "zod";
import type { Deps } from "../../deps.ts";
import { GENERIC_FAILURE, isUserMistake, plainMessage } from "../../domain/errors.ts";
import { slackErrorName } from "../../slack-errors.ts";
import { defineRepository } from "../../store/index.ts";
import { quietLogger } from "../directory.ts";

/**
 * One run of a step, once: a claim keyed by Slack's function_execution_id decides which delivery
 * (on any instance sharing the store) does the work; the outcome is recorded before the step is
 * completed, so a completion that fails is tried again (here, then by the sweep of this or a
 * later process) without doing the work a second time. The function's token is used for the
 * step's own calls and lives only in memory: a completion left to the sweep goes with the
 * installation's bot token, which Slack also takes (Bolt's `attachFunctionToken: false`).
 */

/** What a step ends with: its outputs, or one plain sentence naming the input at fault. */
export type StepOutcome =
  | { readonly outputs: Readonly<Record<string, string | number>> }
  | { readonly error: string };

interface StepClaim {
  readonly team: string;
  readonly executionId: string;
  readonly step: string;
  /** working: the work may be under way; outcome: done, completion pending; done: completed */
  readonly state: "working" | "outcome" | "done";
  readonly outcome?: StepOutcome;
  /** when the state was set (epoch ms) */
  readonly at: number;
}

/**
 * The runs as a repository of their own, so the store's `deleteTeam` removes a workspace's runs
 * with the rest of its data when it uninstalls.
 */
export const stepRunRepo = defineRepository({
  prefix: "fn-step",
  schema: z.unknown(),
  team: "key",
});

const PREFIX = `${stepRunRepo.prefix}:`;
/** How long a run is remembered: Slack gives up on a step long before (a workflow's run is hours). */
export const STEP_MEMORY_MS = 7 * 24 * 3_600_000;
/** Completion attempts in the request's own run, ms after the first failure. */
const RETRY_MS = [250, 1_000, 2_000];
/** The sweep looks for runs whose completion is still pending this often. */
export const SWEEP_EVERY_MS = 60_000;
/**
 * A run still "working" after this long died on the way (a process stopped mid-work): the step is
 * failed, saying so, since whether the event was made cannot be known from here.
 */
const WORKING_STALE_MS = 15 * 60_000;
/** Past this, a run nobody could complete (the app uninstalled, say) is let go. */
const GIVE_UP_MS = 24 * 3_600_000;
const STOPPED =
  "On Air stopped while running this step, so check /onair list before you run the workflow again.";

export function stepRunKey(team: string, executionId: string): string {
  return `${PREFIX}${team}:${executionId.slice(0, 120)}`;
}

/** Completions being tried in this process: the sweep leaves them alone. */
const inFlight = new WeakMap<Deps, Set<string>>();
function flying(deps: Deps): Set<string> {
  let s = inFlight.get(deps);
  if (!s) {
    s = new Set();
    inFlight.set(deps, s);
  }
  return s;
}

/** Slack's answers after which another try cannot help. */
const FINAL = new Set([
  "function_execution_not_found",
  "access_denied",
  "parameter_validation_failed",
  "invalid_arguments",
  "not_allowed_token_type",
]);

type Completed = "done" | "final" | "retry";

async function completeOnce(
  client: WebClient,
  executionId: string,
  outcome: StepOutcome,
): Promise<Completed> {
  try {
    if ("error" in outcome) {
      await client.functions.completeError({
        function_execution_id: executionId,
        error: outcome.error,
      });
    } else {
      await client.functions.completeSuccess({
        function_execution_id: executionId,
        outputs: outcome.outputs,
      });
    }
    return "done";
  } catch (err) {
    const name = slackErrorName(err);
    // Completed already (a redelivery's run, another instance, an earlier try that Slack took).
    if (name === "execution_not_in_running_state") return "done";
    return name !== undefined && FINAL.has(name) ? "final" : "retry";
  }
}

/** Completes the run, trying again on Slack's trouble; marks the claim done once Slack took it. */
async function complete(
  deps: Deps,
  client: WebClient,
  claim: StepClaim,
  outcome: StepOutcome,
  retries: readonly number[],
): Promise<void> {
  const key = stepRunKey(claim.team, claim.executionId);
  const mine = flying(deps);
  mine.add(key);
  try {
    let result = await completeOnce(client, claim.executionId, outcome);
    for (const ms of retries) {
      if (result !== "retry") break;
      await new Promise((r) => setTimeout(r, ms));
      result = await completeOnce(client, claim.executionId, outcome);
    }
    if (result === "retry") {
      deps.logger.warn(
        { step: claim.step, executionId: claim.executionId },
        "Workflow step: Slack did not take the completion; the sweep tries again",
      );
      return;
    }
    if (result === "final") {
      deps.logger.error(
        { step: claim.step, executionId: claim.executionId },
        "Workflow step: Slack refused the completion for good",
      );
    }
    await deps.store
      .update<StepClaim>(key, (c) => ({
        value: { ...c, state: "done", at: deps.now() },
        ttlMs: STEP_MEMORY_MS,
      }))
      .catch(() => false);
  } finally {
    mine.delete(key);
  }
}

/** A client on the function's token for the step's completion, with no retries of its own. */
export function stepClient(deps: Deps, token: string, slackApiUrl: string): WebClient {
  return new WebClient(token, {
    slackApiUrl,
    logger: quietLogger(deps.logger),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
}

/** The sentence a step fails with when its work threw. */
export function failureOf(deps: Deps, step: string, err: unknown): string {
  if (isUserMistake(err)) return plainMessage(err);
  deps.logger.error({ err, step }, "Workflow step failed");
  return GENERIC_FAILURE;
}

/**
 * Runs `work` once per execution, records its outcome, then completes the step. A repeat
 * (Slack's redelivery, another instance) does no work: it finishes a completion left pending, or
 * leaves the run to whoever holds it.
 */
export async function runStep(
  deps: Deps,
  run: { team: string; executionId: string; step: string; client: WebClient },
  work: () => Promise<StepOutcome>,
): Promise<void> {
  const key = stepRunKey(run.team, run.executionId);
  const claim: StepClaim = {
    team: run.team,
    executionId: run.executionId,
    step: run.step,
    state: "working",
    at: deps.now(),
  };
  if (!(await deps.store.claimOnce(key, STEP_MEMORY_MS, claim))) {
    const held = await deps.store.get<StepClaim>(key);
    if (held?.state === "outcome" && held.outcome && !flying(deps).has(key)) {
      await complete(deps, run.client, held, held.outcome, RETRY_MS);
    }
    return;
  }
  let outcome: StepOutcome;
  try {
    outcome = await work();
  } catch (err) {
    outcome = { error: failureOf(deps, run.step, err) };
  }
  // Recorded before completing: whatever happens next, the work is not done again.
  await deps.store
    .update<StepClaim>(key, (c) => ({
      value: { ...c, state: "outcome", outcome, at: deps.now() },
      ttlMs: STEP_MEMORY_MS,
    }))
    .catch((err: unknown) => deps.logger.warn({ err }, "Workflow step: outcome not recorded"));
  await complete(deps, run.client, claim, outcome, RETRY_MS);
}

/**
 * Completes the runs a stopped process (or Slack's trouble) left pending, with the installation's
 * bot token; fails the runs that died mid-work, saying so.
 */
export async function sweepSteps(deps: Deps): Promise<void> {
  const entries = await deps.store.entries<StepClaim>(PREFIX);
  for (const [key, c] of entries) {
    if (flying(deps).has(key) || c.state === "done") continue;
    if (deps.now() - c.at > GIVE_UP_MS) {
      deps.logger.warn(
        { step: c.step, executionId: c.executionId },
        "Workflow step: a run not completed in a day is let go",
      );
      await deps.store.delete(key).catch(() => false);
      continue;
    }
    let outcome = c.outcome;
    if (c.state === "working") {
      if (deps.now() - c.at < WORKING_STALE_MS) continue;
      outcome = { error: STOPPED };
    }
    if (!outcome) continue;
    try {
      const client = await deps.bulkClient(c.team);
      await complete(deps, client, c, outcome, []);
    } catch (err) {
      deps.logger.warn({ err, step: c.step }, "Workflow step: the sweep could not complete a run");
    }
  }
}
