/**
 * A Web API failure as Slack reports it: HTTP 200 with `{ ok: false, error, ...extra }`.
 * Thrown inside the emulator and turned into a response at the edge, so every method reads
 * as straight-line code.
 */
export class SlackApiError extends Error {
  override readonly name = "SlackApiError";
  constructor(
    readonly code: string,
    readonly extra: Readonly<Record<string, unknown>> = {},
  ) {
    super(code);
  }
}

/** Slack's shape for argument problems: the details ride in response_metadata.messages. */
export function argumentError(code: string, messages: readonly string[]): SlackApiError {
  return new SlackApiError(code, { response_metadata: { messages: [...messages] } });
}
