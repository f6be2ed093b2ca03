import type { WebClient } from "@slack/web-api";
import type { Deps } from "../../deps.ts";
import type { Settings } from "../../store/index.ts";
import type { AccessToken } from "../../upstream/relay/schemas.ts";
import { RELAY_ROLES } from "../../upstream/relay/schemas.ts";
import {
  effectiveSettings,
  relayCredentials,
  requireAllowed,
  requireLinked,
  withUserToken,
} from "../access.ts";
import {
  buildTokenForm,
  buildTokenList,
  buildTokenMinted,
  DAY_MS,
  type DurationChoice,
  durationWords,
  TWO_WEEKS_MS,
} from "../blocks/tokens.ts";
import type { CommandContext } from "../router.ts";
import {
  audit,
  decodeMeta,
  encodeMeta,
  openThenFill,
  plainMessage,
  quietClient,
  reportFailure,
} from "./common.ts";
import type { StateValue, ViewStateValues } from "./form.ts";
import { publishHome } from "./home.ts";
import { TOKEN_FIELDS } from "./ids.ts";

/**
 * "Never expires" is offered only when the policy's longest token is at least this long: the
 * settings hold one number (longestTokenMs), and a ceiling of a century or more reads as "no
 * ceiling" (Number.MAX_SAFE_INTEGER is the natural way to store it).
 */
export const NEVER_ALLOWED_MS = 100 * 365 * DAY_MS;

export function allowedDurations(longestMs: number): DurationChoice[] {
  const out: DurationChoice[] = [];
  if (longestMs >= DAY_MS) out.push("day");
  if (longestMs >= TWO_WEEKS_MS) out.push("twoWeeks");
  out.push("custom");
  if (longestMs >= NEVER_ALLOWED_MS) out.push("never");
  return out;
}

export async function openTokenForm(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; triggerId: string; channel?: string },
): Promise<void> {
  await openThenFill(deps, client, args.triggerId, "Mint a relay token", async () => {
    const settings = await effectiveSettings(deps, args.team);
    await requireAllowed(client, settings, args.user, "mint");
    relayCredentials(settings);
    return buildTokenForm({
      privateMetadata: encodeMeta(args.channel ? { channel: args.channel } : {}),
      allowed: allowedDurations(settings.longestTokenMs),
      longestMs: settings.longestTokenMs,
    });
  });
}

export interface TokenRequest {
  roles: string[];
  duration: DurationChoice;
  /** Validity sent to the relay: undefined = its default (2 weeks), -1 = never. */
  durationMs: number | undefined;
  clientName?: string;
  pairingCode?: string;
}

function entry(values: ViewStateValues, id: string): StateValue | undefined {
  return values[id]?.[id];
}

/** Reads and checks the token form against the policy; inline errors by block id. */
export function readTokenForm(
  values: ViewStateValues,
  settings: Pick<Settings, "longestTokenMs">,
): { errors: Record<string, string> } | { request: TokenRequest } {
  const errors: Record<string, string> = {};
  const roles = (entry(values, TOKEN_FIELDS.roles)?.selected_options ?? [])
    .map((o) => o.value)
    .filter((r) => (RELAY_ROLES as readonly string[]).includes(r));
  if (roles.length === 0) errors[TOKEN_FIELDS.roles] = "Pick at least one role.";
  const duration = entry(values, TOKEN_FIELDS.duration)?.selected_option?.value as
    | DurationChoice
    | undefined;
  const allowed = allowedDurations(settings.longestTokenMs);
  const clientName = entry(values, TOKEN_FIELDS.clientName)?.value?.trim() || undefined;
  const pairingCode = entry(values, TOKEN_FIELDS.pairingCode)?.value?.trim() || undefined;
  let durationMs: number | undefined;
  if (!duration || !allowed.includes(duration)) {
    errors[TOKEN_FIELDS.duration] =
      `Pick how long the token is valid; the longest allowed is ${durationWords(settings.longestTokenMs)}.`;
  } else if (duration === "day") durationMs = DAY_MS;
  else if (duration === "twoWeeks") durationMs = undefined;
  else if (duration === "never") durationMs = -1;
  else if (!pairingCode) {
    const raw = entry(values, TOKEN_FIELDS.customHours)?.value;
    const hours = raw ? Number(raw) : Number.NaN;
    if (!raw) errors[TOKEN_FIELDS.customHours] = "Say how many hours the token is valid.";
    else if (!Number.isInteger(hours) || hours < 1)
      errors[TOKEN_FIELDS.customHours] = "Use a whole number of hours, 1 or more.";
    else if (hours * 3_600_000 > settings.longestTokenMs) {
      errors[TOKEN_FIELDS.customHours] =
        `That is longer than this workspace allows (${durationWords(settings.longestTokenMs)}). Pick fewer hours.`;
    } else durationMs = hours * 3_600_000;
  }
  if (Object.keys(errors).length || !duration) return { errors };
  return {
    request: {
      roles,
      duration,
      durationMs,
      ...(clientName ? { clientName } : {}),
      ...(pairingCode ? { pairingCode } : {}),
    },
  };
}

/**
 * Mints and shows the token once, ephemerally, to the requester. The token goes into exactly one
 * Slack call (that chat.postEphemeral) and nowhere else: not the audit, not a log line.
 */
export async function mintToken(
  deps: Deps,
  client: WebClient,
  args: { team: string; user: string; privateMetadata: string; request: TokenRequest },
): Promise<void> {
  const meta = decodeMeta(args.privateMetadata);
  const { request } = args;
  try {
    const settings = await effectiveSettings(deps, args.team);
    await requireAllowed(client, settings, args.user, "mint");
    let token: AccessToken;
    if (request.pairingCode) {
      // Zero-touch pairing needs the user's own events token as meetingaccesstoken.
      const link = await requireLinked(deps, client, args.team, args.user);
      token = await withUserToken(deps, args.team, link, (t) =>
        deps.relay.createAccessToken(
          { meetingAccessToken: t.accessToken },
          {
            roles: request.roles,
            code: request.pairingCode ?? "",
            ...(request.clientName ? { clientName: request.clientName } : {}),
          },
        ),
      );
    } else {
      token = await deps.relay.createAccessToken(
        { basic: relayCredentials(settings) },
        {
          roles: request.roles,
          ...(request.durationMs !== undefined ? { durationMs: request.durationMs } : {}),
          ...(request.clientName ? { clientName: request.clientName } : {}),
        },
      );
    }
    const msg = buildTokenMinted(token);
    await quietClient(deps, client).chat.postEphemeral({
      channel: meta.channel ?? args.user,
      user: args.user,
      text: msg.text,
      blocks: msg.blocks,
    });
    const expiry =
      token.expirationDate === null ? "never" : new Date(token.expirationDate).toISOString();
    await audit(
      deps,
      args.team,
      {
        actor: args.user,
        action: "token.mint",
        details: {
          clientName: token.clientName ?? null,
          roles: token.roles.join(","),
          expiresAt: token.expirationDate,
          pairing: Boolean(request.pairingCode),
        },
      },
      `<@${args.user}> minted a relay token for ${token.clientName ? `“${token.clientName.slice(0, 100)}”` : "an unnamed client"} (roles ${token.roles.join(", ")}; expires ${expiry}).`,
    );
    await publishHome(deps, client, args.team, args.user);
  } catch (err) {
    await reportFailure(deps, client, args.user, err, "mint", meta.channel);
  }
}

/** `/onair tokens`: the enterprise's live tokens, masked. */
export async function tokensCommand(ctx: CommandContext): Promise<void> {
  const settings = await effectiveSettings(ctx.deps, ctx.teamId);
  await requireAllowed(ctx.client, settings, ctx.userId, "mint");
  let list: AccessToken[];
  try {
    list = await ctx.deps.relay.listAccessTokens(relayCredentials(settings));
  } catch (err) {
    ctx.deps.logger.error({ err }, "listing relay tokens failed");
    await ctx.reply(plainMessage(err));
    return;
  }
  const msg = buildTokenList(list, ctx.deps.now());
  await ctx.respond({ response_type: "ephemeral", text: msg.text, blocks: msg.blocks });
}
