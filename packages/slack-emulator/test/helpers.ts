import { type Logger, LogLevel, type WebAPIPlatformError, WebClient } from "@slack/web-api";
import { type SlackEmulator, startSlackEmulator } from "../src/index.ts";

/**
 * For the Web API clients and Bolt apps of these tests: the client prints Slack's response
 * warnings (each refusal a negative test provokes) at error level on the console; the tests
 * assert on the errors themselves, so the run stays silent unless something fails.
 */
export const quietLogger: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  setLevel: () => {},
  getLevel: () => LogLevel.ERROR,
  setName: () => {},
};

/**
 * Every bot scope the emulator checks somewhere, for tests of the emulator itself that are not
 * about scopes. (An app's tests give the scopes of its own manifest instead.)
 */
export const ALL_TEST_SCOPES = [
  "commands",
  "chat:write",
  "chat:write.public",
  "users:read",
  "users:read.email",
  "channels:read",
  "groups:read",
  "im:read",
  "mpim:read",
  "im:write",
  "channels:join",
  "channels:history",
  "groups:history",
  "im:history",
  "mpim:history",
  "usergroups:read",
  "team:read",
  "files:write",
  "links:read",
  "links:write",
  "calls:write",
  "calls:read",
] as const;

/** The Slack error a call failed with (WebClient throws WebAPIPlatformError). */
export async function slackError(
  p: Promise<unknown>,
): Promise<{ error: string; data: Record<string, unknown> }> {
  try {
    await p;
  } catch (err) {
    const data = (err as WebAPIPlatformError).data as unknown as Record<string, unknown>;
    if (data && typeof data.error === "string") return { error: data.error, data };
    throw err;
  }
  throw new Error("the call succeeded; an error was expected");
}

/**
 * An emulator for a test of the emulator itself (every scope, no rate limits) and a bot client
 * on it that never retries and stays quiet.
 */
export async function emulatorWithBot(
  signingSecret: string,
): Promise<{ emu: SlackEmulator; bot: WebClient }> {
  const emu = await startSlackEmulator({
    signingSecret,
    seed: { botScopes: ALL_TEST_SCOPES },
    rateLimits: false,
  });
  const bot = new WebClient(emu.botToken, {
    slackApiUrl: emu.apiUrl,
    retryConfig: { retries: 0 },
    logger: quietLogger,
  });
  return { emu, bot };
}
