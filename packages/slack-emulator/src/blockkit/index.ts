import { checkBlocks } from "./blocks.ts";
import { Checker } from "./checker.ts";
import { type BlockKitResult, isObj, LIMITS, type Surface } from "./limits.ts";

/**
 * Block Kit checks with Slack's limits, reported the way Slack reports them: one line per
 * problem, `[ERROR] … [json-pointer:/blocks/0/text/text]`, in response_metadata.messages.
 * Exported so unit tests can run the app's builders through the same gate the emulator uses.
 *
 * It covers the limits an app trips over in practice (counts, lengths, required fields,
 * uniqueness, element placement) and the rules between fields Slack's element reference states
 * (docs.slack.dev/reference/block-kit): an initial option must be one of the options
 * ("exactly match"), a number input's min_value cannot exceed its max_value (and its
 * initial_value must lie between them, or the client shows a value it will not submit), only
 * one element of a view may have focus_on_load, dispatch_action is incompatible with
 * file_input, dispatch_action_config belongs to text and number inputs, response_url_enabled
 * to conversation and channel selects. It is not a full schema: unknown properties pass.
 */

export { DATA_LIMITS } from "./data-blocks.ts";
export { type BlockKitResult, LIMITS, type Surface } from "./limits.ts";

/** Checks a message's (or a view's) `blocks` array. `pointer` prefixes the JSON pointers. */
export function validateBlocks(
  blocks: unknown,
  opts: { surface?: Surface; pointer?: string } = {},
): BlockKitResult {
  const c = new Checker();
  checkBlocks(c, opts.pointer ?? "/blocks", blocks, opts.surface ?? "message");
  return { ok: c.messages.length === 0, messages: c.messages };
}

/** Checks a modal or App Home view as views.open / push / update / publish would. */
export function validateView(view: unknown, opts: { pointer?: string } = {}): BlockKitResult {
  const c = new Checker();
  const p = opts.pointer ?? "/view";
  if (!isObj(view)) {
    c.err(p, "expected an object");
    return { ok: false, messages: c.messages };
  }
  if (view.type !== "modal" && view.type !== "home") {
    c.err(`${p}/type`, "must be one of modal, home");
    return { ok: false, messages: c.messages };
  }
  const surface: Surface = view.type;
  if (view.blocks === undefined) c.err(`${p}/blocks`, "missing required field");
  else checkBlocks(c, `${p}/blocks`, view.blocks, surface);
  // "Only one element can be set to true" (focus_on_load, on every focusable element).
  for (const extra of c.focused.slice(1)) {
    c.err(extra, "only one element of a view may have focus_on_load");
  }
  c.str(`${p}/private_metadata`, view.private_metadata, LIMITS.privateMetadata);
  c.str(`${p}/callback_id`, view.callback_id, LIMITS.callbackId);
  c.str(`${p}/external_id`, view.external_id, LIMITS.externalId);
  if (surface === "modal") {
    c.text(`${p}/title`, view.title, LIMITS.modalTitle, { plain: true, required: true });
    c.text(`${p}/submit`, view.submit, LIMITS.modalButton, { plain: true });
    c.text(`${p}/close`, view.close, LIMITS.modalButton, { plain: true });
    const hasInput =
      Array.isArray(view.blocks) && view.blocks.some((b) => isObj(b) && b.type === "input");
    if (hasInput && view.submit === undefined) {
      c.err(`${p}/submit`, "must provide submit when the view has input blocks");
    }
  }
  return { ok: c.messages.length === 0, messages: c.messages };
}
