/**
 * Text that reaches Slack's mrkdwn: escaping, truncation and dates. Every string that did not come
 * from this app (titles, names, e-mails, client names, upstream text) goes through `escapeMrkdwn`
 * before it reaches mrkdwn or a message's `text`, so it can never become a mention (`<!channel>`,
 * `<@U…>`, `<!subteam^…>`), a channel link or a disguised URL.
 */

/** Slack's three control characters; escaped text renders as typed and pings nobody. */
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
 * Escapes then truncates, never leaving a broken entity (`&am…`) at the cut.
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

/** Untrusted text for mrkdwn: truncated to `max` characters of what the user typed, then escaped. */
export function userText(text: string, max: number): string {
  return escapeMrkdwn(truncate(text, max));
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

/** A link whose URL came from upstream: no character that could end or split Slack's `<url|label>`. */
export function safeLink(url: string, label: string): string {
  const clean = url.replace(/[<>|\s]/g, "");
  return `<${/^https?:\/\//i.test(clean) ? clean : `https://${clean}`}|${escapeMrkdwn(label)}>`;
}
