import { allOptions, initialState, isEmptyState, optionObject, stateShape } from "../view-state.js";
import type { Json, ViewRecord } from "../workspace.ts";

/**
 * The driver's side of view state: what a test gives (a value, an option value, a handle, a
 * channel name) turned into the entry Slack's client would send, by the shared table in
 * view-state.js; and the checks Slack's client makes before it lets a modal be submitted.
 */

export class DriverError extends Error {
  override readonly name = "DriverError";
}

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** The interactive elements of a block (actions' elements, an accessory, an input's element). */
export function elementsOf(block: Json): Json[] {
  const out: Json[] = [];
  if (block.type === "actions" && Array.isArray(block.elements)) {
    for (const e of block.elements) if (isObj(e)) out.push(e);
  }
  if (isObj(block.accessory)) out.push(block.accessory);
  if (isObj(block.element)) out.push(block.element);
  return out;
}

/** Every stateful element of a surface with its current state (stored over initial). */
export function stateOf(
  blocks: readonly unknown[],
  stored: Record<string, Record<string, Json>>,
): Record<string, Record<string, Json>> {
  const values: Record<string, Record<string, Json>> = {};
  for (const b of blocks) {
    if (!isObj(b) || typeof b.block_id !== "string") continue;
    for (const el of elementsOf(b)) {
      const init = initialState(el);
      if (!init || typeof el.action_id !== "string") continue;
      const blockValues = values[b.block_id] ?? {};
      blockValues[el.action_id] = stored[b.block_id]?.[el.action_id] ?? init;
      values[b.block_id] = blockValues;
    }
  }
  return values;
}

export interface Resolvers {
  /** a user id or handle → the user id (throws DriverError when nobody has it) */
  userId(ref: string): string;
  /** a channel id or name → the channel id (throws DriverError when none has it) */
  channelId(ref: string): string;
}

function toSeconds(raw: unknown): number {
  const sec =
    raw instanceof Date
      ? Math.floor(raw.getTime() / 1000)
      : typeof raw === "number"
        ? raw
        : /^\d+$/.test(String(raw))
          ? Number(raw)
          : Math.floor(Date.parse(String(raw)) / 1000);
  if (!Number.isFinite(sec)) throw new DriverError(`not a date-time: ${String(raw)}`);
  return sec;
}

/** Turn what a test gives into the state entry Slack would send for this element. */
export function toState(el: Json, raw: unknown, r: Resolvers): Json {
  const type = String(el.type);
  if (isObj(raw) && typeof raw.type === "string" && raw.type === type) return raw;
  // An overflow menu keeps no state but its action carries the chosen option the same way.
  const shape =
    type === "overflow"
      ? { key: "selected_option", kind: "option", multi: false }
      : stateShape(type);
  if (!shape) throw new DriverError(`a ${type} holds no value`);
  const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : [v]);
  const one = (v: unknown): unknown => {
    switch (shape.kind) {
      case "option": {
        if (isObj(v) && typeof v.value === "string" && isObj(v.text)) return v;
        const value = String(isObj(v) ? v.value : v);
        const found = optionObject(el, value);
        if (found) return found;
        if (type.endsWith("external_select")) {
          return { text: { type: "plain_text", text: value }, value };
        }
        const offered = allOptions(el).map((o) => String(o.value));
        throw new DriverError(
          `option ${value} is not among ${type} ${String(el.action_id)}'s options (${offered.join(", ")})`,
        );
      }
      case "user":
        return r.userId(String(v));
      case "conversation":
      case "channel":
        return r.channelId(String(v));
      case "datetime":
        return toSeconds(v);
      case "rich_text":
      case "files":
        return v;
      default:
        return String(v);
    }
  };
  const value =
    raw === null ? (shape.multi ? [] : null) : shape.multi ? list(raw).map(one) : one(raw);
  const out: Json = { type, [shape.key]: value };
  if (type === "timepicker" && el.timezone !== undefined) out.timezone = el.timezone;
  return out;
}

/** Slack's client-side checks before it lets a modal be submitted. */
export function clientCheck(rec: ViewRecord, values: Record<string, Record<string, Json>>): void {
  for (const b of rec.view.blocks) {
    if (!isObj(b) || b.type !== "input" || !isObj(b.element)) continue;
    const el = b.element;
    const s = values[String(b.block_id)]?.[String(el.action_id)];
    if (!s) continue;
    const label = `${String(b.block_id)}/${String(el.action_id)}`;
    if (b.optional !== true && isEmptyState(s)) {
      throw new DriverError(`required input ${label} is empty; Slack would not submit the modal`);
    }
    const v = s.value;
    if (typeof v !== "string" || v === "") continue;
    if (el.type === "plain_text_input") {
      if (typeof el.min_length === "number" && v.length < el.min_length) {
        throw new DriverError(`${label} is shorter than min_length ${el.min_length}`);
      }
      if (typeof el.max_length === "number" && v.length > el.max_length) {
        throw new DriverError(`${label} is longer than max_length ${el.max_length}`);
      }
    }
    if (el.type === "number_input") {
      const n = Number(v);
      const pattern = el.is_decimal_allowed === true ? /^-?\d+(\.\d+)?$/ : /^-?\d+$/;
      if (!pattern.test(v)) throw new DriverError(`${label} is not a valid number: ${v}`);
      if (el.min_value !== undefined && n < Number(el.min_value)) {
        throw new DriverError(`${label} is below min_value ${String(el.min_value)}`);
      }
      if (el.max_value !== undefined && n > Number(el.max_value)) {
        throw new DriverError(`${label} is above max_value ${String(el.max_value)}`);
      }
    }
    if (el.type === "email_text_input" && !/^[^@\s]+@[^@\s]+\.[^@\s]+$/.test(v)) {
      throw new DriverError(`${label} is not an e-mail address: ${v}`);
    }
  }
}
