import { DriverError, type SlackEmulator } from "@onair/slack-emulator";
import { z } from "zod";
import { STEPS } from "../slack/functions/definitions.ts";

/**
 * The playground's Workflow Builder: runs one of On Air's steps with the inputs given, as a
 * workflow would (function_executed), and answers with its completion once the app completed it
 * (or with the execution still running after `waitMs`).
 */

export const StepBody = z.object({
  callback_id: z.enum([STEPS.schedule, STEPS.attendance]),
  inputs: z.record(z.string(), z.unknown()),
});

export async function runPlaygroundStep(
  emulator: SlackEmulator,
  body: z.output<typeof StepBody>,
  waitMs = 10_000,
): Promise<{ status: number; body: Record<string, unknown> }> {
  let r: Awaited<ReturnType<SlackEmulator["driver"]["functionExecuted"]>>;
  try {
    r = await emulator.driver.functionExecuted({
      callback_id: body.callback_id,
      inputs: body.inputs,
    });
  } catch (err) {
    // Inputs Workflow Builder would not send (a required one unset, a wrong type).
    if (err instanceof DriverError) return { status: 400, body: { error: err.message } };
    throw err;
  }
  const ex = r.execution;
  const until = Date.now() + waitMs;
  while (ex.state === "running" && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    status: 200,
    body: {
      id: ex.id,
      state: ex.state,
      ...(ex.outputs !== undefined && { outputs: ex.outputs }),
      ...(ex.error !== undefined && { error: ex.error }),
    },
  };
}
