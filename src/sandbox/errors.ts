/**
 * A control-API request the sandbox refuses: `status` is 400 (bad input) or 404 (unknown event).
 * Thrown by the in-process control and answered as `{ "error": message }` over HTTP.
 */
export class SandboxControlError extends Error {
  override readonly name = "SandboxControlError";
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}
