import type { Deps } from "../deps.ts";
import { effectiveSettings } from "./access.ts";
import type { Actor } from "./directory.ts";
import { userText } from "./text.ts";

/**
 * How an audit line names who acted: their Slack name, escaped, in bold. Not a mention: an audit
 * channel would otherwise ping the actor with every line about their own doing.
 */
export async function actorName(actor: Actor): Promise<string> {
  const profile = await actor.directory.profile(actor.user).catch(() => undefined);
  return `*${userText(profile?.name ?? actor.user, 80)}*`;
}

export interface AuditEntry {
  actor: string;
  action: string;
  target?: string;
  details?: Record<string, string | number | boolean | null>;
}

/**
 * Records the action in the store and, when the team has an audit channel, posts `summary` there
 * through the bulk client. `details` must never hold a token (the store scrubs them anyway), and
 * `summary` is mrkdwn: every string in it that did not come from this app must already be
 * escaped (text.ts), so an event title cannot ping the audit channel.
 */
export async function audit(
  deps: Deps,
  team: string,
  entry: AuditEntry,
  summary: string,
): Promise<void> {
  await deps.store.audit.append(team, { ...entry, at: deps.now() });
  const settings = await effectiveSettings(deps, team);
  if (!settings.auditChannel) return;
  // The record is stored; the channel's line goes out on the channel's pace, in the background,
  // and a channel that refuses it never undoes the action.
  void deps.live.announce(team, settings.auditChannel, summary.slice(0, 3000));
}
