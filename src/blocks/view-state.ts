import { NOISE_LEVELS, type NoiseLevel } from "../store/index.ts";

/**
 * A view's submitted state as Slack sends it (`view.state.values[block_id][action_id]`), read
 * defensively: a forged submission may hold anything, so every reader takes only the shapes it
 * expects and treats the rest as unset.
 */

/** One element's entry in a view's state. */
export interface StateValue {
  type?: string;
  value?: string | null;
  selected_date_time?: number | null;
  selected_date?: string | null;
  selected_option?: { value: string } | null;
  selected_options?: Array<{ value: string }>;
  selected_users?: string[];
  selected_conversation?: string | null;
}
export type ViewStateValues = Record<string, Record<string, StateValue>>;

/** Our input blocks use one id for the block and its element. */
export function entry(values: ViewStateValues, id: string): StateValue | undefined {
  const block = values?.[id];
  if (!block || typeof block !== "object") return undefined;
  const e = block[id];
  return e && typeof e === "object" ? e : undefined;
}

export function textOf(values: ViewStateValues, id: string): string | undefined {
  const e = entry(values, id);
  if (!e) return undefined;
  return typeof e.value === "string" ? e.value : "";
}

export function optionOf(values: ViewStateValues, id: string): string | undefined {
  const v = entry(values, id)?.selected_option?.value;
  return typeof v === "string" ? v : undefined;
}

export function optionsOf(values: ViewStateValues, id: string): string[] | undefined {
  const e = entry(values, id);
  if (!e) return undefined;
  const list = Array.isArray(e.selected_options) ? e.selected_options : [];
  return list.flatMap((o) => (o && typeof o.value === "string" ? [o.value] : []));
}

export function int(raw: string | null | undefined): number | undefined {
  if (raw === null || raw === undefined || raw.trim() === "") return undefined;
  const n = Number(raw);
  return Number.isFinite(n) ? n : Number.NaN;
}

/** A noise level picked in a radio group; anything unknown reads as unset (the live default). */
export function noiseOf(e: StateValue | undefined): NoiseLevel | undefined {
  const v = e?.selected_option?.value;
  return (NOISE_LEVELS as readonly string[]).includes(v ?? "") ? (v as NoiseLevel) : undefined;
}
