import type { Installation } from "@slack/bolt";

/** A v2 bot installation of `team` holding the given secrets (for store tests). */
export function installationFor(
  team: string,
  secrets: { bot: string; user: string; refresh: string },
): Installation {
  return {
    team: { id: team, name: `Team ${team}` },
    enterprise: undefined,
    user: {
      id: "U0ADMIN",
      token: secrets.user,
      refreshToken: secrets.refresh,
      scopes: ["chat:write"],
    },
    bot: {
      token: secrets.bot,
      refreshToken: secrets.refresh,
      expiresAt: 1_900_000_000,
      scopes: ["commands", "chat:write"],
      id: "B01",
      userId: "U0BOT",
    },
    appId: "A01",
    tokenType: "bot",
    isEnterpriseInstall: false,
    authVersion: "v2",
  };
}
