/** Types for view-state.js (plain ESM JavaScript shared with the browser). */

export type StateKind =
  | "text"
  | "date"
  | "time"
  | "datetime"
  | "option"
  | "user"
  | "conversation"
  | "channel"
  | "rich_text"
  | "files";

export interface StateShape {
  /** the field of the state entry holding the value (value, selected_option, …) */
  readonly key: string;
  /** the element's field holding its initial value, or null when it has none */
  readonly initial: string | null;
  readonly kind: StateKind;
  /** a list of values (multi selects, checkboxes, files) */
  readonly multi: boolean;
}

export type StateEntry = { type: string } & Record<string, unknown>;
type Element = Record<string, unknown>;

export const VIEW_STATE: Readonly<Record<string, StateShape>>;
export const ACTION_ONLY: readonly string[];
export function stateShape(type: string): StateShape | undefined;
export function initialState(el: Element): StateEntry | undefined;
export function isEmptyState(s: Record<string, unknown> | undefined | null): boolean;
export function allOptions(el: Element): Element[];
export function optionObject(
  el: Element,
  value: unknown,
): { text: unknown; value: unknown; description?: unknown } | undefined;
export function selectedValues(el: Element, state: Record<string, unknown> | undefined): string[];
export function stateFromValues(el: Element, values: readonly unknown[]): StateEntry | undefined;
