import type { Json } from "../workspace.ts";
import { slashCommand } from "./commands.ts";
import { createContext } from "./context.ts";
import { eventCallback, postMessage, uninstall, urlVerification } from "./events.ts";
import { functionExecuted } from "./functions.ts";
import { blockAction, shortcut, viewClosed, viewSubmission } from "./interactions.ts";
import { oauthInstall } from "./oauth.ts";
import type { SlackDriver, SlackDriverOptions } from "./types.ts";

/**
 * Plays Slack's side towards the app: slash commands (commands.ts), interactions
 * (interactions.ts) and Events API callbacks (events.ts), signed exactly as Slack signs them and
 * posted to `${appUrl}/slack/events` (transport.ts), and the OAuth install (oauth.ts). What Slack
 * does with the app's answer (a slash command's ack body, a view_submission's response_action)
 * is applied to the workspace.
 *
 * Slack's clock is kept too: a slash command or interaction not acknowledged within 3 seconds
 * is a timeout (the person sees "operation_timeout"; the late answer is not used), an Events API
 * callback not acknowledged in time (or answered with an error) is delivered again, nearly at
 * once, then after a minute, then after five. `ssl_check=1` is sent unsigned, as Slack sends it
 * when a request URL is saved.
 */

export { DriverError } from "./state.ts";
export { signSlackRequest } from "./transport.ts";
export type * from "./types.ts";

export function createSlackDriver(opts: SlackDriverOptions): SlackDriver {
  const ctx = createContext(opts);
  return {
    appUrl: ctx.appUrl,
    slashCommand: (input) => slashCommand(ctx, input),
    blockAction: (input) => blockAction(ctx, input),
    viewSubmission: (input) => viewSubmission(ctx, input),
    viewClosed: (input) => viewClosed(ctx, input),
    shortcut: (input) => shortcut(ctx, input),
    postMessage: (input) => postMessage(ctx, input),
    event: (event, o) => eventCallback(ctx, event, o),
    uninstall: (o) => uninstall(ctx, o),
    urlVerification: (challenge, o) => urlVerification(ctx, challenge, o),
    oauthInstall: (o) => oauthInstall(ctx, o),
    functionExecuted: (input) => functionExecuted(ctx, input),
    deliveries: ctx.deliveries,
    timeouts: ctx.timeouts,
    settled: () => ctx.settled(),
    cancelRedeliveries: () => ctx.cancelRedeliveries(),

    async sslCheck() {
      // Unsigned, no timestamp: Slack checks the certificate of a request URL being saved.
      const fields = { ssl_check: "1", token: ctx.ws.verificationToken };
      const r = await ctx.post(
        {
          "content-type": "application/x-www-form-urlencoded",
          "user-agent": "Slackbot 1.0 (+https://api.slack.com/robots)",
        },
        new URLSearchParams(fields).toString(),
      );
      return { ...r, payload: fields };
    },

    async send(rawBody, contentType, o = {}) {
      const r = await ctx.send(rawBody, contentType, o);
      let payload: Json = {};
      try {
        payload = contentType.includes("json")
          ? (JSON.parse(rawBody) as Json)
          : Object.fromEntries(new URLSearchParams(rawBody).entries());
      } catch {
        payload = {};
      }
      return { ...r, payload };
    },
  };
}
