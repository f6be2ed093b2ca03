/** Every route the server answers (README: Architecture), one constant each; handlers and URL builders use these. */
export const ROUTES = {
  slackEvents: "/slack/events",
  slackInstall: "/slack/install",
  slackOAuthRedirect: "/slack/oauth_redirect",
  /** Followed by the subscription id. */
  webhook: "/webhooks/events/",
  healthz: "/healthz",
  readyz: "/readyz",
  metrics: "/metrics",
  playground: "/playground",
  /** Followed by relay/…, events/…, control/…. */
  sandbox: "/_sandbox/",
} as const;

export const SLACK_PATHS: ReadonlySet<string> = new Set([
  ROUTES.slackEvents,
  ROUTES.slackInstall,
  ROUTES.slackOAuthRedirect,
]);

/** Names the route for metrics by its template, never by its raw path (ids would explode the labels). */
export function routeLabel(pathname: string): string {
  if (SLACK_PATHS.has(pathname)) return pathname;
  if (pathname.startsWith(ROUTES.webhook)) return "/webhooks/events/:id";
  if (pathname.startsWith(ROUTES.sandbox)) return "/_sandbox";
  if (pathname === ROUTES.healthz || pathname === ROUTES.readyz || pathname === ROUTES.metrics) {
    return pathname;
  }
  if (pathname.startsWith(ROUTES.playground) || pathname.startsWith("/_emulator")) {
    return "/playground";
  }
  return "other";
}
