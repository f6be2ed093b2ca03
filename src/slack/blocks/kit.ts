import type { types } from "@slack/bolt";

/**
 * Small pure helpers shared by the Block Kit builders: Slack's types, mrkdwn escaping,
 * truncation with a visible note, and dates as `<!date^…>` so every reader sees their own zone.
 */

export type KnownBlock = types.KnownBlock;
export type View = types.View;
export type ModalView = types.ModalView;
export type HomeView = types.HomeView;
export type PlainTextOption = types.PlainTextOption;

/** mrkdwn control characters; user-written text must not turn into mentions or links. */
export function escapeMrkdwn(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/**
 * Cuts text to at most `max` characters (code points, so no half surrogate pair is left), ending
 * with an ellipsis so the reader knows there is more.
 */
export function truncate(text: string, max: number): string {
  const chars = Array.from(text);
  if (chars.length <= max) return text;
  return `${chars.slice(0, Math.max(0, max - 1)).join("")}…`;
}

/** True when truncate would cut. */
export function isTooLong(text: string, max: number): boolean {
  return Array.from(text).length > max;
}

/**
 * Escapes then truncates mrkdwn, never leaving a broken entity (`&am…`) at the cut.
 * The result's length is at most `max`.
 */
export function mrkdwnWithin(text: string, max: number): string {
  const escaped = escapeMrkdwn(text);
  if (escaped.length <= max) return escaped;
  let cut = Array.from(escaped)
    .slice(0, Math.max(0, max - 1))
    .join("");
  const amp = cut.lastIndexOf("&");
  if (amp !== -1 && !cut.slice(amp).includes(";")) cut = cut.slice(0, amp);
  return `${cut}…`;
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** UTC fallback for clients that cannot render `<!date>`. */
export function utcFallback(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())} UTC`;
}

/** A time every reader sees in their own zone. */
export function slackDate(ms: number, format = "{date_short_pretty} {time}"): string {
  return `<!date^${Math.floor(ms / 1000)}^${format}|${utcFallback(ms)}>`;
}

export function plain(text: string, max: number): { type: "plain_text"; text: string } {
  return { type: "plain_text", text: truncate(text, max) || " " };
}
