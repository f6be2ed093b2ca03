/**
 * Which workspace a Slack request acts in: the one rule, read by every listener through Bolt's
 * `context.teamId` (set once, before any listener runs, by bolt-app.ts).
 *
 * - An interaction (button, submission, shortcut): the acting person's own workspace,
 *   `user.team_id`, then `team.id`. In a Slack Connect channel `team` is the channel's host, and
 *   on an org-wide install `team` is null and `view.app_installed_team_id` is the enterprise
 *   (Bolt's own choice for a submission), so neither decides.
 * - A slash command: `team_id`, the workspace it was typed in.
 * - An Events API event: `context_team_id`, then `team_id` unless that is the enterprise (an
 *   org-level event names no workspace: undefined).
 *
 * The enterprise id is only ever the owner of the org-wide installation record itself.
 */
export function actingWorkspace(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  if (body.type === "event_callback") {
    if (str(body.context_team_id)) return body.context_team_id;
    const team = body.team_id;
    if (!str(team)) return undefined;
    return team === enterpriseOf(body) ? undefined : team;
  }
  if (str(body.command)) return str(body.team_id) ? body.team_id : undefined;
  const user = body.user;
  if (isObject(user) && str(user.team_id)) return user.team_id;
  if (isObject(body.team) && str(body.team.id)) return body.team.id;
  return undefined;
}

/** The enterprise the request came through, when any. */
export function enterpriseOf(body: unknown): string | undefined {
  if (!isObject(body)) return undefined;
  if (body.type === "event_callback") {
    const auth = Array.isArray(body.authorizations) ? body.authorizations[0] : undefined;
    if (isObject(auth) && str(auth.enterprise_id)) return auth.enterprise_id;
    return str(body.enterprise_id) ? body.enterprise_id : undefined;
  }
  if (str(body.enterprise_id)) return body.enterprise_id;
  if (isObject(body.enterprise) && str(body.enterprise.id)) return body.enterprise.id;
  if (isObject(body.team) && str(body.team.enterprise_id)) return body.team.enterprise_id;
  return undefined;
}

/** Whether the request came through an org-wide installation. */
export function isOrgInstall(body: unknown): boolean {
  if (!isObject(body)) return false;
  if (body.type === "event_callback") {
    const auth = Array.isArray(body.authorizations) ? body.authorizations[0] : undefined;
    return isObject(auth) && auth.is_enterprise_install === true;
  }
  return body.is_enterprise_install === true || body.is_enterprise_install === "true";
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const str = (v: unknown): v is string => typeof v === "string" && v.length > 0;
