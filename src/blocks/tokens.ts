import { type DurationChoice, durationWords, type TokenDraft } from "../domain/tokens.ts";
import { TOKEN_FIELDS, VIEWS } from "../ids.ts";
import type { AccessToken } from "../upstream/relay/schemas.ts";
import { RELAY_ROLES } from "../upstream/relay/schemas.ts";
import {
  escapeMrkdwn,
  type KnownBlock,
  type ModalView,
  plain,
  slackDate,
  truncate,
  userText,
} from "./kit.ts";
import { optionOf, optionsOf, textOf, type ViewStateValues } from "./view-state.ts";

export const DURATIONS = {
  day: "1 day",
  twoWeeks: "2 weeks (the relay's default)",
  custom: "Custom (hours below)",
  never: "Never expires",
} as const satisfies Record<DurationChoice, string>;

/** Where relay tokens are revoked: the API has no operation for it (spec: Authentication, 4). */
export const REVOKE_HINT =
  "Tokens can't be revoked from Slack: the relay's API has no way to do it. A relay admin revokes a token on the relay's admin page, where it is listed by its client name.";

export interface TokenFormInput {
  privateMetadata: string;
  /** Which durations the policy allows, in display order. */
  allowed: readonly DurationChoice[];
  longestMs: number;
}

function option(text: string, value: string, description?: string) {
  return {
    text: plain(text, 75),
    value,
    ...(description ? { description: plain(description, 75) } : {}),
  };
}

export function buildTokenForm(input: TokenFormInput): ModalView {
  const roleOptions = RELAY_ROLES.map((r) =>
    option(
      r === "ROLE_READONLY" ? "Read only (ROLE_READONLY)" : "Read and write (ROLE_READWRITE)",
      r,
    ),
  );
  const durationOptions = input.allowed.map((d) => option(DURATIONS[d], d));
  const initial = durationOptions.find((o) => o.value === "twoWeeks") ?? durationOptions[0];
  const blocks: KnownBlock[] = [
    {
      type: "section",
      text: {
        type: "mrkdwn",
        text: `A relay access token works in place of the relay's user name and password. You will see it once, only you, right after this form. The longest allowed here is ${durationWords(input.longestMs)}.`,
      },
    },
    {
      type: "input",
      block_id: TOKEN_FIELDS.roles,
      label: plain("Roles", 2000),
      element: {
        type: "checkboxes",
        action_id: TOKEN_FIELDS.roles,
        options: roleOptions,
        // Read only preselected: the least a token can do; writing is a choice made on purpose.
        initial_options: roleOptions.filter((o) => o.value === "ROLE_READONLY"),
      },
    },
    {
      type: "input",
      block_id: TOKEN_FIELDS.duration,
      label: plain("Valid for", 2000),
      element: {
        type: "radio_buttons",
        action_id: TOKEN_FIELDS.duration,
        options: durationOptions,
        ...(initial ? { initial_option: initial } : {}),
      },
    },
    {
      type: "input",
      block_id: TOKEN_FIELDS.customHours,
      optional: true,
      label: plain("Custom validity, in hours", 2000),
      element: {
        type: "number_input",
        action_id: TOKEN_FIELDS.customHours,
        is_decimal_allowed: false,
        min_value: "1",
      },
    },
    {
      type: "input",
      block_id: TOKEN_FIELDS.clientName,
      optional: true,
      label: plain("Client name", 2000),
      hint: plain(
        "Shown to the admin who may revoke the token later, so name the app or device that will use it.",
        2000,
      ),
      element: { type: "plain_text_input", action_id: TOKEN_FIELDS.clientName, max_length: 100 },
    },
    {
      type: "input",
      block_id: TOKEN_FIELDS.pairingCode,
      optional: true,
      label: plain("Zero-touch pairing code", 2000),
      hint: plain(
        "Only to pair a device: the token is then made with your own events account and is valid 1 day, whatever is chosen above.",
        2000,
      ),
      element: { type: "plain_text_input", action_id: TOKEN_FIELDS.pairingCode, max_length: 64 },
    },
  ];
  return {
    type: "modal",
    callback_id: VIEWS.token,
    private_metadata: input.privateMetadata,
    title: plain("Mint a relay token", 24),
    submit: plain("Mint token", 24),
    close: plain("Cancel", 24),
    blocks,
  };
}

function expiryText(expirationDate: number | null): string {
  return expirationDate === null ? "never expires" : `expires ${slackDate(expirationDate)}`;
}

/**
 * The one message that carries a token: ephemeral, to the requester only. Nothing else may hold
 * `token.accessToken`. The token is in a block only, never in `text`: `text` is what
 * notifications, their previews and Slack's e-mails of unread messages show.
 */
/** The relay's roles of a token, in words: upstream text, so escaped, cut, and at most 10. */
function rolesInWords(roles: readonly string[]): string {
  if (roles.length === 0) return "none";
  const shown = roles.slice(0, 10).map((r) => userText(r, 40));
  return roles.length > 10 ? `${shown.join(", ")} and ${roles.length - 10} more` : shown.join(", ");
}

export function buildTokenMinted(token: AccessToken): { text: string; blocks: KnownBlock[] } {
  const who = token.clientName ? ` for ${escapeMrkdwn(truncate(token.clientName, 100))}` : "";
  const head = `Here is your relay token${who}. It ${expiryText(token.expirationDate)}; roles: ${rolesInWords(token.roles)}. Copy it now: On Air keeps no copy and won't show it again.`;
  const secret = escapeMrkdwn(token.accessToken.replace(/`/g, ""));
  return {
    text: `Here is your relay token${who}: open this message to copy it.`,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: head } },
      { type: "section", text: { type: "mrkdwn", text: `\`\`\`${secret}\`\`\`` } },
      { type: "context", elements: [{ type: "mrkdwn", text: REVOKE_HINT }] },
    ],
  };
}

/**
 * The token shown in the form's own modal, which only the requester sees: nothing in a channel
 * can lose it, and Slack refuses no modal for want of channel membership.
 */
export function buildTokenMintedModal(token: AccessToken): ModalView {
  return {
    type: "modal",
    callback_id: VIEWS.notice,
    title: plain("Your relay token", 24),
    close: plain("Done", 24),
    blocks: buildTokenMinted(token).blocks,
  };
}

/** Reads the token form as typed; the domain checks it against the policy (tokens.ts). */
export function readTokenForm(values: ViewStateValues): TokenDraft {
  const duration = optionOf(values, TOKEN_FIELDS.duration);
  const durations = Object.keys(DURATIONS) as DurationChoice[];
  const clientName = textOf(values, TOKEN_FIELDS.clientName)?.trim();
  const pairingCode = textOf(values, TOKEN_FIELDS.pairingCode)?.trim();
  return {
    roles: optionsOf(values, TOKEN_FIELDS.roles) ?? [],
    duration: durations.find((d) => d === duration),
    customHours: textOf(values, TOKEN_FIELDS.customHours),
    clientName: clientName || undefined,
    pairingCode: pairingCode || undefined,
  };
}

/** The domain's errors under the form's fields. */
export function tokenErrorsToBlocks(
  errors: Record<string, string | undefined>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [field, message] of Object.entries(errors)) {
    const id = (TOKEN_FIELDS as Record<string, string>)[field];
    if (id && message) out[id] = message;
  }
  return out;
}

export function maskToken(token: string): string {
  return `••••${token.slice(-4)}`;
}

/** `/onair tokens`: the enterprise's live tokens, each masked to its last 4 characters. */
export function buildTokenList(
  tokens: readonly AccessToken[],
  now: number,
): { text: string; blocks: KnownBlock[] } {
  const live = tokens
    .filter((t) => t.expirationDate === null || t.expirationDate > now)
    .sort(
      (a, b) =>
        (a.expirationDate ?? Number.MAX_SAFE_INTEGER) -
        (b.expirationDate ?? Number.MAX_SAFE_INTEGER),
    );
  if (live.length === 0) {
    const text = "Your enterprise has no live relay tokens. Mint one with `/onair token`.";
    return { text, blocks: [{ type: "section", text: { type: "mrkdwn", text } }] };
  }
  const SHOWN = 40;
  const lines = live.slice(0, SHOWN).map((t) => {
    const name = t.clientName ? escapeMrkdwn(truncate(t.clientName, 60)) : "_no client name_";
    return `• \`${maskToken(t.accessToken)}\` ${name} — ${t.roles.map(escapeMrkdwn).join(", ")} — ${expiryText(t.expirationDate)}`;
  });
  const blocks: KnownBlock[] = [
    { type: "section", text: { type: "mrkdwn", text: `*Live relay tokens* (${live.length}):` } },
  ];
  // Sections hold 3,000 characters: ten tokens per section keeps each well inside.
  for (let i = 0; i < lines.length; i += 10) {
    blocks.push({
      type: "section",
      text: { type: "mrkdwn", text: truncate(lines.slice(i, i + 10).join("\n"), 3000) },
    });
  }
  if (live.length > SHOWN) {
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `…and ${live.length - SHOWN} more.` }],
    });
  }
  blocks.push({ type: "context", elements: [{ type: "mrkdwn", text: REVOKE_HINT }] });
  return { text: `Live relay tokens (${live.length})`, blocks };
}
