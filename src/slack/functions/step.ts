import type { AllMiddlewareArgs, SlackEventMiddlewareArgs } from "@slack/bolt";
import type { Deps } from "../../deps.ts";
import type { Actor } from "../../domain/directory.ts";
import { DirectoryCaches } from "../directory.ts";
import { countingFetch } from "../slack-metrics.ts";
import { runStep, type StepOutcome, stepClient } from "./run.ts";

export type StepArgs = SlackEventMiddlewareArgs<"function_executed"> & AllMiddlewareArgs;

/**
 * What a step's listener works with: the workspace the workflow runs in, a client and a
 * directory on the function's own token, held only for this run (a fresh lookup cache, so the
 * token is kept by nothing once the run ends).
 */
export interface StepRun {
  readonly team: string;
  readonly inputs: Readonly<Record<string, unknown>>;
  /** the person a user input names, acting in the workflow's workspace */
  actorFor(user: string): Actor;
}

/** Runs one execution of a step under its claim (run.ts), with the step's own token. */
export async function handleStep(
  deps: Deps,
  step: string,
  args: StepArgs,
  work: (run: StepRun) => Promise<StepOutcome>,
): Promise<void> {
  const { event, body, context, client } = args;
  const team = context.teamId ?? body.team_id ?? context.enterpriseId;
  if (!team) throw new Error("a function_executed without a workspace");
  const token = event.bot_access_token ?? client.token ?? "";
  const web = stepClient(deps, token, client.slackApiUrl);
  const directories = new DirectoryCaches(deps.logger, deps.now, countingFetch(deps.metrics));
  await runStep(deps, { team, executionId: event.function_execution_id, step, client: web }, () =>
    work({
      team,
      inputs: (event.inputs ?? {}) as Record<string, unknown>,
      actorFor: (user) => ({ team, user, directory: directories.for(team, web) }),
    }),
  );
}
