import { argumentError, SlackApiError } from "./errors.ts";
import { Args, type CallContext, METHODS, type MethodSpec } from "./methods/index.ts";
import { authenticate } from "./oauth.ts";
import { COMMON_ERRORS, type MethodFacts, methodFacts } from "./reference/index.ts";
import type { Json, TokenRecord, Workspace } from "./workspace.ts";

/**
 * One Web API call, checked against Slack's reference before its handler runs, in Slack's
 * order: the method exists, the token is good, it holds one of the method's scopes, the
 * required arguments and argument groups are there; then the handler. Arguments the method does
 * not take are not refused (Slack ignores them: nothing in its reference or its "warnings"
 * mechanism names them) but are returned so the call record shows them.
 */

export interface DispatchInput {
  readonly method: string;
  readonly raw: Json;
  readonly token: string | undefined;
  readonly basic: { user: string; pass: string } | undefined;
  /** conversations.history / replies page size cap (non-Marketplace apps) */
  readonly historyPageMax?: number | undefined;
}

export interface DispatchResult {
  /** the body, `ok` included */
  readonly body: Json;
  readonly headers: Record<string, string>;
  readonly auth: TokenRecord | undefined;
  readonly warnings: readonly string[];
  readonly unknownArguments: readonly string[];
}

/** Thrown when a handler answers an error it did not declare: a bug of the emulator, not Slack. */
export class EmulatorBug extends Error {
  override readonly name = "EmulatorBug";
}

/** Arguments every method takes beyond its own list. */
const ALWAYS_ACCEPTED = new Set(["token"]);

function given(raw: Json, name: string): boolean {
  const v = raw[name];
  return v !== undefined && v !== null;
}

function nonEmpty(raw: Json, name: string): boolean {
  const v = raw[name];
  return v !== undefined && v !== null && v !== "";
}

/** Required arguments and argument groups, answered the way Slack answers them. */
function checkArguments(facts: MethodFacts, raw: Json): void {
  for (const name of facts.required) {
    if (given(raw, name)) continue;
    // An absent required argument is invalid_arguments (measured: brekkylab/backlot#84), unless
    // the method documents its own error for it (chat.unfurl's missing_channel, …).
    const own = `missing_${name}`;
    if (facts.errors.has(own)) throw new SlackApiError(own);
    throw argumentError("invalid_arguments", [`[ERROR] missing required field: ${name}`]);
  }
  for (const group of facts.argGroups) {
    const present = group.args.filter((a) => nonEmpty(raw, a));
    const list = group.args.join(", ");
    if (!group.mutually_exclusive) {
      if (present.length === 0) {
        if (facts.errors.has("no_text")) throw new SlackApiError("no_text");
        throw argumentError("invalid_arguments", [`[ERROR] must provide one of: ${list}`]);
      }
      continue;
    }
    if (present.length > 1) {
      if (present.includes("markdown_text") && facts.errors.has("markdown_text_conflict")) {
        throw new SlackApiError("markdown_text_conflict");
      }
      throw argumentError("invalid_arguments", [`[ERROR] only one of ${list} may be given`]);
    }
    if (present.length === 0 && group.required !== false) {
      throw argumentError("invalid_arguments", [`[ERROR] one of ${list} is required`]);
    }
  }
}

function checkScopes(facts: MethodFacts, auth: TokenRecord): void {
  const accepted = facts.scopes[auth.kind];
  if (accepted.length === 0) return;
  if (accepted.some((s) => auth.scopes.includes(s))) return;
  throw new SlackApiError("missing_scope", {
    needed: accepted.join(","),
    provided: auth.scopes.join(","),
  });
}

export function dispatch(
  ws: Workspace,
  input: DispatchInput,
  methods: Readonly<Record<string, MethodSpec>> = METHODS,
): DispatchResult {
  const warnings: string[] = [];
  const headers: Record<string, string> = {};
  const spec = Object.hasOwn(methods, input.method) ? methods[input.method] : undefined;
  const facts = methodFacts(input.method);
  const unknownArguments = facts
    ? Object.keys(input.raw).filter((k) => !facts.accepted.has(k) && !ALWAYS_ACCEPTED.has(k))
    : [];
  let auth: TokenRecord | undefined;
  const done = (body: Json): DispatchResult => ({
    body,
    headers,
    auth,
    warnings,
    unknownArguments,
  });
  try {
    if (!spec || !facts) {
      if (facts) warnings.push("not_emulated");
      throw new SlackApiError("unknown_method");
    }
    if (spec.auth) {
      auth = authenticate(ws, input.token);
      headers["x-oauth-scopes"] = auth.scopes.join(",");
      const accepted = facts.scopes[auth.kind];
      if (accepted.length > 0) headers["x-accepted-oauth-scopes"] = accepted.join(",");
      checkScopes(facts, auth);
    }
    checkArguments(facts, input.raw);
    const ctx: CallContext = {
      ws,
      args: new Args(input.raw),
      auth,
      basic: input.basic,
      warn: (code) => {
        if (!warnings.includes(code)) warnings.push(code);
      },
      historyPageMax: input.historyPageMax,
    };
    try {
      return done({ ok: true, ...spec.handler(ctx) });
    } catch (err) {
      if (
        err instanceof SlackApiError &&
        input.method !== "api.test" &&
        !spec.errors.includes(err.code) &&
        !COMMON_ERRORS.has(err.code)
      ) {
        throw new EmulatorBug(`${input.method} answered ${err.code}, which it does not declare`);
      }
      throw err;
    }
  } catch (err) {
    if (!(err instanceof SlackApiError)) throw err;
    return done({ ok: false, error: err.code, ...err.extra });
  }
}
