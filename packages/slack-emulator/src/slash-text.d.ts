/** Types for slash-text.js (plain ESM JavaScript shared with the browser). */

export interface Directory {
  readonly users?: Iterable<{
    readonly id: string;
    readonly name: string;
    readonly real_name?: string;
    readonly deleted?: boolean;
    readonly is_bot?: boolean;
  }>;
  readonly channels?: Iterable<{
    readonly id: string;
    readonly name: string;
    readonly is_im?: boolean;
    readonly is_mpim?: boolean;
  }>;
  readonly usergroups?: Iterable<{ readonly id: string; readonly handle: string }>;
}

export interface Suggestions {
  readonly kind: "channel" | "user";
  /** where the `#` or `@` being typed starts, and where the typed part ends */
  readonly start: number;
  readonly end: number;
  readonly items: readonly { readonly label: string; readonly insert: string }[];
}

export function escapeEntities(text: string): string;
export function escapeSlashText(typed: string, directory: Directory): string;
export function linkNames(text: string, directory: Directory): string;
export function suggest(
  text: string,
  caret: number | undefined,
  directory: Directory,
): Suggestions | null;
