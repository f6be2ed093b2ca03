import { CARD_ACTIONS, HOME_ACTIONS } from "../ids.ts";
import type { AccessToken } from "../upstream/relay/schemas.ts";
import { GONE_WORDS, liveStateInWords } from "./event-card.ts";
import {
  escapeMrkdwn,
  type HomeView,
  type KnownBlock,
  slackDate,
  truncate,
  userText,
} from "./kit.ts";
import { maskToken, REVOKE_HINT } from "./tokens.ts";

export interface HomeEvent {
  eventId: string;
  title: string;
  start?: number;
  gone?: boolean;
  /** The current instance's state, and when it ended (the card's words). */
  live?: { state: string | undefined; endedAt?: number; next?: number };
}

export interface HomeInput {
  link?: { email: string; userId: number };
  /** Upcoming, soonest first. */
  events: readonly HomeEvent[];
  canSchedule: boolean;
  canMint: boolean;
  isAdmin: boolean;
  /** Admins get a settings button when the settings modal can be opened from here. */
  settingsButton: boolean;
  /** For those who may mint: the enterprise's live tokens (masked here), or why they can't be listed. */
  tokens?: { list: readonly AccessToken[]; now: number } | { error: string };
  /** One line for admins above everything else (the app's own text, e.g. a refused token refresh). */
  notice?: string | undefined;
}

const TOKENS_SHOWN = 10;

function tokenBlocks(tokens: NonNullable<HomeInput["tokens"]>): KnownBlock[] {
  const head: KnownBlock = {
    type: "section",
    text: { type: "mrkdwn", text: "*Live relay tokens*" },
  };
  if ("error" in tokens) {
    return [
      head,
      { type: "context", elements: [{ type: "mrkdwn", text: userText(tokens.error, 2000) }] },
    ];
  }
  const live = tokens.list.filter(
    (t) => t.expirationDate === null || t.expirationDate > tokens.now,
  );
  if (live.length === 0) {
    return [head, { type: "context", elements: [{ type: "mrkdwn", text: "None right now." }] }];
  }
  const lines = live.slice(0, TOKENS_SHOWN).map((t) => {
    const name = t.clientName ? escapeMrkdwn(truncate(t.clientName, 60)) : "_no client name_";
    const expiry =
      t.expirationDate === null ? "never expires" : `expires ${slackDate(t.expirationDate)}`;
    return `• \`${maskToken(t.accessToken)}\` ${name} — ${expiry}`;
  });
  if (live.length > TOKENS_SHOWN)
    lines.push(`…and ${live.length - TOKENS_SHOWN} more: \`/onair tokens\` lists them all.`);
  return [
    head,
    { type: "section", text: { type: "mrkdwn", text: truncate(lines.join("\n"), 3000) } },
    { type: "context", elements: [{ type: "mrkdwn", text: REVOKE_HINT }] },
  ];
}

/** Header, link, actions; then 2 blocks per event; a view holds 100 blocks. */
const EVENTS_SHOWN = 40;

export function buildHome(input: HomeInput): HomeView {
  const blocks: KnownBlock[] = [
    { type: "header", text: { type: "plain_text", text: "On Air" } },
    ...(input.notice
      ? [{ type: "section" as const, text: { type: "mrkdwn" as const, text: input.notice } }]
      : []),
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: input.link
          ? `:white_check_mark: Linked to the events account *${escapeMrkdwn(input.link.email)}*.`
          : ":grey_question: Not linked to an events account yet. Run `/onair link` (it uses the e-mail on your Slack profile).",
      },
    },
  ];
  const buttons = [];
  if (input.canSchedule) {
    buttons.push({
      type: "button" as const,
      action_id: HOME_ACTIONS.schedule,
      text: { type: "plain_text" as const, text: "Schedule an event" },
      style: "primary" as const,
    });
  }
  if (input.canMint) {
    buttons.push({
      type: "button" as const,
      action_id: HOME_ACTIONS.token,
      text: { type: "plain_text" as const, text: "Mint a relay token" },
    });
  }
  if (input.isAdmin && input.settingsButton) {
    buttons.push({
      type: "button" as const,
      action_id: HOME_ACTIONS.settings,
      text: { type: "plain_text" as const, text: "Settings" },
    });
  }
  if (buttons.length) blocks.push({ type: "actions", block_id: "home_actions", elements: buttons });
  if (input.isAdmin && !input.settingsButton) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: "Admins: change credentials, policy and the audit channel with `/onair settings`.",
        },
      ],
    });
  }
  if (input.canMint && input.tokens) blocks.push({ type: "divider" }, ...tokenBlocks(input.tokens));
  blocks.push(
    { type: "divider" },
    { type: "section", text: { type: "mrkdwn", text: "*Your upcoming events*" } },
  );
  if (input.events.length === 0) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: "None yet. Schedule one with the button above or `/onair schedule`.",
        },
      ],
    });
  }
  for (const e of input.events.slice(0, EVENTS_SHOWN)) {
    blocks.push({
      type: "section",
      text: {
        type: "mrkdwn",
        text: `*${escapeMrkdwn(truncate(e.title || e.eventId, 300))}*${e.start !== undefined ? `\n${slackDate(e.start)}` : ""}${e.gone ? `\n${GONE_WORDS}` : e.live ? `\n${liveStateInWords(e.live.state ?? "NOT_STARTED", e.live)}` : ""}`,
      },
    });
    // A gone event has nothing left to edit, cancel or notify.
    if (e.gone) continue;
    blocks.push({
      type: "actions",
      block_id: `home_event_${e.eventId}`.slice(0, 255),
      elements: [
        {
          type: "button",
          action_id: CARD_ACTIONS.edit,
          value: e.eventId,
          text: { type: "plain_text", text: "Edit" },
        },
        {
          type: "button",
          action_id: CARD_ACTIONS.cancel,
          value: e.eventId,
          text: { type: "plain_text", text: "Cancel event" },
          style: "danger",
        },
        {
          type: "button",
          action_id: CARD_ACTIONS.notify,
          value: e.eventId,
          text: { type: "plain_text", text: "Notify a channel" },
        },
      ],
    });
  }
  if (input.events.length > EVENTS_SHOWN) {
    blocks.push({
      type: "context",
      elements: [
        {
          type: "mrkdwn",
          text: `…and ${input.events.length - EVENTS_SHOWN} more: \`/onair list\` shows them all.`,
        },
      ],
    });
  }
  return { type: "home", blocks };
}
