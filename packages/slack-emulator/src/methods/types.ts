import { SlackApiError } from "../errors.ts";
import type { Channel, Json, TokenRecord, Workspace } from "../workspace.ts";
import type { Args } from "./args.ts";

/** What a method handler gets: parsed arguments, the caller's token, the workspace. */
export interface CallContext {
  readonly ws: Workspace;
  readonly args: Args;
  /** undefined only for methods that take no token (oauth.v2.access, api.test) */
  readonly auth: TokenRecord | undefined;
  /** the HTTP Basic pair, when the client sent its credentials that way */
  readonly basic: { user: string; pass: string } | undefined;
  /** records a warning on the call (Slack accepted it but a stricter reading would not) */
  warn(code: string): void;
  /** conversations.history / replies page size cap (15 for non-Marketplace apps) */
  readonly historyPageMax: number | undefined;
}

/**
 * One emulated method. Its scopes, required and accepted arguments, argument groups and rate
 * tier come from Slack's reference (reference/); the spec adds only the behaviour and the errors
 * the handler may throw beyond the common ones, each of which the reference must document for
 * this method (test/reference.test.ts holds every spec to that).
 */
export interface MethodSpec {
  /** false: no token needed (the OAuth exchange, api.test) */
  readonly auth: boolean;
  readonly errors: readonly string[];
  readonly handler: (ctx: CallContext) => Json;
}

export function actor(ctx: CallContext): TokenRecord {
  if (!ctx.auth) throw new SlackApiError("not_authed");
  return ctx.auth;
}

export type ConversationFamily = "read" | "history";

/** The scope a conversation of this kind needs for reading (channels:, groups:, im:, mpim:). */
export function scopeFor(ch: Channel, family: ConversationFamily): string {
  const kind = ch.is_im ? "im" : ch.is_mpim ? "mpim" : ch.is_private ? "groups" : "channels";
  return `${kind}:${family}`;
}

/**
 * Slack checks the scope for the kind of conversation named, not just any of the method's
 * accepted scopes: conversations.history on a public channel needs channels:history even when
 * the token holds groups:history.
 */
export function requireConversationScope(
  ctx: CallContext,
  ch: Channel,
  family: ConversationFamily,
): void {
  const t = actor(ctx);
  const needed = scopeFor(ch, family);
  if (!t.scopes.includes(needed)) {
    throw new SlackApiError("missing_scope", { needed, provided: t.scopes.join(",") });
  }
}
