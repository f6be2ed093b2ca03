import type { Installation } from "@slack/bolt";

/** Slack's default life of a rotating token, for an installation stored before we knew it. */
const DEFAULT_LIFETIME_SEC = 43_200;
/** The longest a refresh comes before expiry (Slack's SDKs refresh within two hours). */
const MAX_MARGIN_SEC = 7_200;

/** What we keep beside Bolt's installation (in the same record). */
export interface RotationFields {
  /** the bot token's life when it was issued, seconds (for when to refresh) */
  rotationLifetimeSec?: number;
  /** when Slack refused the refresh (ms): the app stops posting there until reinstalled */
  rotationRefusedAt?: number;
  /** oauth.v2.exchange answered token_rotation_not_enabled at this time (ms) */
  rotationExchangeRefusedAt?: number;
}
export type Stored = Installation & RotationFields;

/** How long before expiry a token is due: the last quarter of its life, at most two hours. */
export const marginSec = (inst: Stored) =>
  Math.min(MAX_MARGIN_SEC, Math.max(1, (inst.rotationLifetimeSec ?? DEFAULT_LIFETIME_SEC) / 4));

/** The installation as Bolt may see it: no refresh token, so Bolt never refreshes itself. */
export function forBolt(inst: Stored): Installation {
  const out: Stored = structuredClone(inst);
  if (out.bot) {
    delete out.bot.refreshToken;
    delete out.bot.expiresAt;
  }
  if (out.user) {
    delete out.user.refreshToken;
    delete out.user.expiresAt;
  }
  return out;
}
