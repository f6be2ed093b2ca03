import { functionJson, startExecution } from "../functions.ts";
import type { FunctionExecution } from "../workspace.ts";
import type { DriverContext } from "./context.ts";
import { eventCallback } from "./events.ts";
import { DriverError } from "./state.ts";
import type { DriverResult, FunctionExecutedInput } from "./types.ts";

/**
 * A workflow reaching one of the app's custom steps: function_executed with the inputs, the
 * execution's ids and its `bot_access_token`, delivered as any Events API callback (acked within
 * 3 s, redelivered when not). The execution then waits for functions.completeSuccess / Error.
 */
export async function functionExecuted(
  ctx: DriverContext,
  input: FunctionExecutedInput,
): Promise<DriverResult & { execution: FunctionExecution }> {
  const { ws } = ctx;
  const def = ws.functions.get(input.callback_id);
  if (!def) {
    throw new DriverError(
      `the app declares no function ${input.callback_id} (seed.functions: ${[...ws.functions.keys()].join(", ") || "none"})`,
    );
  }
  const inputs = { ...input.inputs };
  for (const [name, p] of Object.entries(def.input_parameters)) {
    const v = inputs[name];
    // A test names people and channels as elsewhere; Slack sends their ids.
    if (typeof v !== "string") continue;
    if (p.type === "slack#/types/user_id") inputs[name] = ctx.resolvers.userId(v);
    if (p.type === "slack#/types/channel_id") inputs[name] = ctx.resolvers.channelId(v);
  }
  const { execution, problems } = startExecution(ws, input.callback_id, inputs);
  if (problems.length > 0 && input.validate !== false) {
    ws.functionExecutions.delete(execution.id);
    ws.tokens.delete(execution.token);
    throw new DriverError(
      `Workflow Builder would not run ${input.callback_id}: ${problems.join("; ")}`,
    );
  }
  const { callback_id: _c, inputs: _i, validate: _v, ...sendOpts } = input;
  const r = await eventCallback(
    ctx,
    {
      type: "function_executed",
      function: functionJson(ws, input.callback_id, def, execution.functionId),
      inputs: execution.inputs,
      function_execution_id: execution.id,
      workflow_execution_id: execution.workflowExecutionId,
      bot_access_token: execution.token,
    },
    sendOpts,
  );
  return { ...r, execution };
}
