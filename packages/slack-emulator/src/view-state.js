// How each input element's value appears in `view.state.values` (and in a block_actions
// payload's `actions[]`), as Slack's client sends it. One table for the driver (Node) and the
// playground page (the browser loads this very file), so the two cannot drift apart.
// Plain ESM JavaScript on purpose: no build step between it and the browser. Types: view-state.d.ts.
//
// Source: Slack's reference for each element (docs.slack.dev/reference/block-kit/block-elements)
// and the view_submission / block_actions payload samples in slackapi/java-slack-sdk
// (json-logs/samples/app-backend/view/ViewSubmissionPayload.json and the block_actions ones).

/** @type {Readonly<Record<string, {key: string, initial: string | null, kind: string, multi: boolean}>>} */
export const VIEW_STATE = Object.freeze({
  plain_text_input: { key: "value", initial: "initial_value", kind: "text", multi: false },
  email_text_input: { key: "value", initial: "initial_value", kind: "text", multi: false },
  url_text_input: { key: "value", initial: "initial_value", kind: "text", multi: false },
  number_input: { key: "value", initial: "initial_value", kind: "text", multi: false },
  datepicker: { key: "selected_date", initial: "initial_date", kind: "date", multi: false },
  timepicker: { key: "selected_time", initial: "initial_time", kind: "time", multi: false },
  datetimepicker: {
    key: "selected_date_time",
    initial: "initial_date_time",
    kind: "datetime",
    multi: false,
  },
  static_select: {
    key: "selected_option",
    initial: "initial_option",
    kind: "option",
    multi: false,
  },
  external_select: {
    key: "selected_option",
    initial: "initial_option",
    kind: "option",
    multi: false,
  },
  radio_buttons: {
    key: "selected_option",
    initial: "initial_option",
    kind: "option",
    multi: false,
  },
  multi_static_select: {
    key: "selected_options",
    initial: "initial_options",
    kind: "option",
    multi: true,
  },
  multi_external_select: {
    key: "selected_options",
    initial: "initial_options",
    kind: "option",
    multi: true,
  },
  checkboxes: { key: "selected_options", initial: "initial_options", kind: "option", multi: true },
  users_select: { key: "selected_user", initial: "initial_user", kind: "user", multi: false },
  multi_users_select: {
    key: "selected_users",
    initial: "initial_users",
    kind: "user",
    multi: true,
  },
  conversations_select: {
    key: "selected_conversation",
    initial: "initial_conversation",
    kind: "conversation",
    multi: false,
  },
  multi_conversations_select: {
    key: "selected_conversations",
    initial: "initial_conversations",
    kind: "conversation",
    multi: true,
  },
  channels_select: {
    key: "selected_channel",
    initial: "initial_channel",
    kind: "channel",
    multi: false,
  },
  multi_channels_select: {
    key: "selected_channels",
    initial: "initial_channels",
    kind: "channel",
    multi: true,
  },
  rich_text_input: {
    key: "rich_text_value",
    initial: "initial_value",
    kind: "rich_text",
    multi: false,
  },
  file_input: { key: "files", initial: null, kind: "files", multi: true },
});

/**
 * Elements that act (block_actions) without keeping a value in view.state: a button, an
 * overflow menu (its choice rides in the action as `selected_option`).
 */
export const ACTION_ONLY = Object.freeze(["button", "workflow_button", "overflow"]);

/** The table's row for an element type, or undefined when it keeps no state. */
export function stateShape(type) {
  return Object.hasOwn(VIEW_STATE, type) ? VIEW_STATE[type] : undefined;
}

/** Slack's state entry for an element nobody has touched: its initial_* value or empty. */
export function initialState(el) {
  const shape = el && typeof el.type === "string" ? stateShape(el.type) : undefined;
  if (!shape) return undefined;
  const initial = shape.initial === null ? undefined : el[shape.initial];
  const out = { type: el.type, [shape.key]: initial ?? (shape.multi ? [] : null) };
  // A timepicker with a timezone reports it beside the time.
  if (el.type === "timepicker" && el.timezone !== undefined) out.timezone = el.timezone;
  return out;
}

/** The entry holds nothing (what Slack's client refuses to submit for a required input). */
export function isEmptyState(s) {
  if (!s) return true;
  const v = Object.entries(s).find(([k]) => k !== "type" && k !== "timezone")?.[1];
  return v === null || v === undefined || v === "" || (Array.isArray(v) && v.length === 0);
}

/** Every option of a select, checkbox group or radio group, grouped ones included. */
export function allOptions(el) {
  const direct = Array.isArray(el.options) ? el.options : [];
  const grouped = Array.isArray(el.option_groups)
    ? el.option_groups.flatMap((g) => (g && Array.isArray(g.options) ? g.options : []))
    : [];
  return [...direct, ...grouped].filter((o) => o && typeof o === "object");
}

/**
 * The option object Slack puts in the state for a chosen value: the element's own option (text,
 * value, description), or undefined when the element has no such option.
 */
export function optionObject(el, value) {
  const o = allOptions(el).find((x) => x.value === String(value));
  if (!o) return undefined;
  return { text: o.text, value: o.value, ...(o.description ? { description: o.description } : {}) };
}

/** The values chosen in a state entry, as a list of strings (option values or ids). */
export function selectedValues(el, state) {
  const shape = stateShape(el.type);
  if (!state || !shape) return [];
  const v = state[shape.key];
  if (v === null || v === undefined) return [];
  const list = Array.isArray(v) ? v : [v];
  return shape.kind === "option" ? list.map((o) => o.value) : list.map(String);
}

/**
 * The state entry for a list of chosen values (option values, user / conversation / channel ids,
 * or one text value). An option value the element does not offer is kept as its own label for
 * external selects (the app supplies those options) and dropped otherwise.
 */
export function stateFromValues(el, values) {
  const shape = stateShape(el.type);
  if (!shape) return undefined;
  const type = el.type;
  let chosen = values;
  if (shape.kind === "option") {
    chosen = values
      .map(
        (v) =>
          optionObject(el, v) ??
          (type.endsWith("external_select")
            ? { text: { type: "plain_text", text: String(v) }, value: String(v) }
            : undefined),
      )
      .filter((o) => o !== undefined);
  }
  const out = { type, [shape.key]: shape.multi ? chosen : (chosen[0] ?? null) };
  if (type === "timepicker" && el.timezone !== undefined) out.timezone = el.timezone;
  return out;
}
