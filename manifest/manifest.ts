import { BOT_EVENTS, COMMAND, DEFAULT_JOIN_HOST, SHORTCUTS, SUBCOMMANDS } from "../src/ids.ts";
import { STEP_DEFINITIONS } from "../src/slack/functions/definitions.ts";
import { botScopes } from "../src/slack/scopes.ts";

/** The Slack app manifest as typed data. `render.ts` writes it as app-manifest.yml. */
export function buildManifest(baseUrl: string, joinHost: string = DEFAULT_JOIN_HOST) {
  const url = baseUrl.replace(/\/+$/, "");
  return {
    _metadata: { major_version: 1, minor_version: 1 },
    display_information: {
      name: "On Air",
      description: "Schedule live events and watch them go live, from Slack.",
      long_description:
        "On Air connects Slack to your live events service. Organizers schedule, edit and cancel webinars, town halls and all-hands with /onair; integrators mint relay access tokens; and a channel watches each event go live on one card that updates in place, with who joined and left gathered into a quiet thread. Admins install it once per workspace and set the upstream credentials in /onair settings.",
      background_color: "#1d1f3b",
    },
    features: {
      app_home: {
        home_tab_enabled: true,
        messages_tab_enabled: true,
        messages_tab_read_only_enabled: true,
      },
      bot_user: { display_name: "On Air", always_online: true },
      shortcuts: Object.values(SHORTCUTS).map((s) => ({
        name: s.name,
        type: "global",
        callback_id: s.callbackId,
        description: s.description,
      })),
      // Join links of the events service unfurl live (link_shared).
      unfurl_domains: [joinHost],
      slash_commands: [
        {
          command: COMMAND,
          url: `${url}/slack/events`,
          description: "Schedule and watch live events",
          usage_hint: SUBCOMMANDS.join(" | "),
          should_escape: true,
        },
      ],
    },
    // Workflow Builder steps (v1 form, `is_required` per parameter); run by this app's own
    // server (function_executed), so `function_runtime: remote`.
    functions: STEP_DEFINITIONS,
    oauth_config: {
      redirect_urls: [`${url}/slack/oauth_redirect`],
      scopes: { bot: botScopes() },
    },
    settings: {
      event_subscriptions: {
        request_url: `${url}/slack/events`,
        bot_events: [...BOT_EVENTS],
      },
      interactivity: { is_enabled: true, request_url: `${url}/slack/events` },
      org_deploy_enabled: true,
      socket_mode_enabled: false,
      function_runtime: "remote",
      token_rotation_enabled: true,
    },
  };
}

export type Manifest = ReturnType<typeof buildManifest>;
