import { SlackApiError } from "./errors.ts";
import { randomHex, slackId } from "./ids.ts";
import type {
  FunctionDefinition,
  FunctionExecution,
  FunctionParameter,
  Json,
  TokenRecord,
} from "./model.ts";
import type { Workspace } from "./workspace.ts";

/**
 * Custom steps (Workflow Builder): a workflow runs a step the app declares, Slack sends
 * function_executed with the inputs and a token of the execution's own (`bot_access_token`), and
 * the step stays "In progress" until the app calls functions.completeSuccess (outputs checked
 * against the declared output parameters) or functions.completeError. Facts from
 * ../shared/slack-reference/ (events-and-payloads.json `function_executed`,
 * blocks-and-objects.md "Manifest: custom steps").
 */

/** Why a value does not fit a parameter's type, or undefined when it does. */
export function misfit(ws: Workspace, p: FunctionParameter, v: unknown): string | undefined {
  switch (p.type) {
    case "string":
      return typeof v === "string" ? undefined : "a string";
    case "integer":
      return Number.isInteger(v) ? undefined : "an integer";
    case "number":
      return typeof v === "number" && Number.isFinite(v) ? undefined : "a number";
    case "boolean":
      return typeof v === "boolean" ? undefined : "a boolean";
    case "slack#/types/timestamp":
      return Number.isInteger(v) && (v as number) >= 0 ? undefined : "a Unix timestamp in seconds";
    case "slack#/types/user_id":
      return typeof v === "string" && ws.users.has(v) ? undefined : "a user id of the workspace";
    case "slack#/types/channel_id":
      return typeof v === "string" && ws.channels.has(v)
        ? undefined
        : "a channel id of the workspace";
    default:
      return undefined;
  }
}

/** Every way these values break the declared parameters (missing required, unknown, wrong type). */
export function parameterProblems(
  ws: Workspace,
  declared: Readonly<Record<string, FunctionParameter>>,
  values: Json,
): string[] {
  const out: string[] = [];
  for (const [name, p] of Object.entries(declared)) {
    const v = values[name];
    if (v === undefined || v === null) {
      if (p.is_required) out.push(`${name} is required`);
      continue;
    }
    const want = misfit(ws, p, v);
    if (want) out.push(`${name} must be ${want}`);
  }
  for (const name of Object.keys(values)) {
    if (!Object.hasOwn(declared, name)) out.push(`${name} is not a declared parameter`);
  }
  return out;
}

/** The function object function_executed carries (parameters as an array, as Slack sends them). */
export function functionJson(
  ws: Workspace,
  callbackId: string,
  def: FunctionDefinition,
  functionId: string,
): Json {
  const params = (ps: Readonly<Record<string, FunctionParameter>>) =>
    Object.entries(ps).map(([name, p]) => ({
      type: p.type,
      name,
      ...(p.title !== undefined && { title: p.title }),
      ...(p.description !== undefined && { description: p.description }),
      is_required: p.is_required === true,
    }));
  const created = ws.nowSec() - 86_400;
  return {
    id: functionId,
    callback_id: callbackId,
    title: def.title,
    ...(def.description !== undefined && { description: def.description }),
    type: "app",
    input_parameters: params(def.input_parameters),
    output_parameters: params(def.output_parameters),
    app_id: ws.app.appId,
    date_created: created,
    date_updated: created,
    date_deleted: 0,
  };
}

/**
 * A workflow reaches the step: a running execution with a token of its own. The inputs must fit
 * the declared input parameters (Workflow Builder does not run a step with a required input
 * unset or of another type); `problems` says why they do not.
 */
export function startExecution(
  ws: Workspace,
  callbackId: string,
  inputs: Json,
): { execution: FunctionExecution; problems: string[] } {
  const def = ws.functions.get(callbackId);
  if (!def) throw new Error(`the app declares no function ${callbackId}`);
  const problems = parameterProblems(ws, def.input_parameters, inputs);
  // The installation's bot token: the newest one still valid (an OAuth install replaces the seed's).
  const base = [...ws.tokens.values()]
    .filter((t) => t.kind === "bot" && !t.revoked && t.execution === undefined)
    .at(-1);
  const token = `xwfp-${randomHex(10)}-${randomHex(16)}`;
  const id = slackId("Fx", 10);
  ws.tokens.set(token, {
    token,
    kind: "bot",
    userId: ws.app.botUserId,
    scopes: [...(base?.scopes ?? [])],
    // Not documented how long a workflow token lives: it lives as long as the workspace here.
    expiresAt: undefined,
    refreshToken: undefined,
    revoked: false,
    execution: id,
  });
  const execution: FunctionExecution = {
    id,
    workflowExecutionId: slackId("Wx", 10),
    callbackId,
    functionId: `Fn${randomHex(5).toUpperCase()}`,
    inputs: structuredClone(inputs),
    token,
    state: "running",
    completions: [],
  };
  ws.functionExecutions.set(id, execution);
  return { execution, problems };
}

/**
 * functions.completeSuccess / completeError: a bot token (the execution's own, or the app's), on
 * a running execution; a function token of another execution is access_denied.
 */
export function completeExecution(
  ws: Workspace,
  auth: TokenRecord,
  method: string,
  id: string,
  outcome: { outputs: unknown } | { error: string },
): void {
  const ex = ws.functionExecutions.get(id);
  const token = auth.execution === undefined ? "bot" : "function";
  const refuse = (code: string): never => {
    ex?.completions.push({ method, ok: false, error: code, token });
    throw new SlackApiError(code);
  };
  if (auth.kind !== "bot") throw new SlackApiError("not_allowed_token_type");
  if (!ex) throw new SlackApiError("function_execution_not_found");
  if (auth.execution !== undefined && auth.execution !== id) refuse("access_denied");
  if (ex.state !== "running") refuse("execution_not_in_running_state");
  if ("error" in outcome) {
    ex.state = "failed";
    ex.error = outcome.error;
  } else {
    const outputs = outcome.outputs;
    const def = ws.functions.get(ex.callbackId);
    if (typeof outputs !== "object" || outputs === null || Array.isArray(outputs) || !def) {
      refuse("parameter_validation_failed");
    }
    if (parameterProblems(ws, def!.output_parameters, outputs as Json).length > 0) {
      refuse("parameter_validation_failed");
    }
    ex.state = "completed";
    ex.outputs = structuredClone(outputs as Json);
  }
  ex.completions.push({ method, ok: true, token });
}
