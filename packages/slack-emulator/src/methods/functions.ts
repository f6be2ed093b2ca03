import { completeExecution } from "../functions.ts";
import type { MethodSpec } from "./types.ts";
import { actor } from "./types.ts";

/** functions.*: a custom step's completion (functions.ts holds the rules). */

const ERRORS = ["access_denied", "execution_not_in_running_state", "function_execution_not_found"];

export const FUNCTIONS: Readonly<Record<string, MethodSpec>> = {
  "functions.completeSuccess": {
    auth: true,
    errors: [...ERRORS, "parameter_validation_failed"],
    handler: (ctx) => {
      const id = ctx.args.str("function_execution_id") ?? "";
      const outputs = ctx.args.json("outputs", "parameter_validation_failed");
      completeExecution(ctx.ws, actor(ctx), "functions.completeSuccess", id, { outputs });
      return {};
    },
  },

  "functions.completeError": {
    auth: true,
    errors: ERRORS,
    handler: (ctx) => {
      const id = ctx.args.str("function_execution_id") ?? "";
      const error = ctx.args.str("error") ?? "";
      completeExecution(ctx.ws, actor(ctx), "functions.completeError", id, { error });
      return {};
    },
  },
};
