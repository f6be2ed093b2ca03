import type { types } from "@slack/bolt";
import { truncate } from "../domain/text.ts";

/**
 * The builders' toolkit: Slack's Block Kit types, and the text helpers of src/domain/text.ts
 * (escaping, truncation, `<!date^…>`) every builder needs.
 */

export type KnownBlock = types.KnownBlock;
export type View = types.View;
export type ModalView = types.ModalView;
export type HomeView = types.HomeView;
export type PlainTextOption = types.PlainTextOption;

export {
  escapeMrkdwn,
  isTooLong,
  mrkdwnWithin,
  safeLink,
  slackDate,
  truncate,
  userText,
  utcFallback,
} from "../domain/text.ts";

export function plain(text: string, max: number): { type: "plain_text"; text: string } {
  return { type: "plain_text", text: truncate(text, max) || " " };
}

/**
 * For every post that carries outside text (titles, attendees' names): no link or media
 * previews, so a name that is a URL never brings a preview of that page into a channel under the
 * app's name.
 */
export const NO_UNFURL = { unfurl_links: false, unfurl_media: false } as const;

/**
 * A mrkdwn text object shown as written (`verbatim: true`): a URL inside outside text (a title, a
 * name) stays text instead of a link Slack made on its own; links the app writes
 * (`<https://…|label>`) and `<!date^…>` still work.
 */
export function shownAsWritten(text: string): { type: "mrkdwn"; text: string; verbatim: true } {
  return { type: "mrkdwn", text, verbatim: true };
}

/** Slack's limit on a section's text (Block Kit reference), in UTF-16 units as Slack counts. */
const SECTION_TEXT_MAX = 3000;

/** At most `max` UTF-16 units of escaped mrkdwn, never splitting a character or an `&…;` entity. */
function cutEscaped(text: string, max: number): string {
  if (text.length <= max) return text;
  let out = "";
  for (const ch of text) {
    if (out.length + ch.length > max - 1) break;
    out += ch;
  }
  const amp = out.lastIndexOf("&");
  if (amp !== -1 && !out.slice(amp).includes(";")) out = out.slice(0, amp);
  return `${out}…`;
}

/**
 * mrkdwn shown as written: sections with `verbatim: true`, so a URL inside text that came from
 * outside (an attendee's name) stays text instead of becoming a link Slack made on its own.
 * Split at line ends, then at ", " inside a line too long, to keep each section within Slack's
 * limit; only a single name longer than that is cut. `text` must not be empty.
 */
export function verbatimSections(text: string): KnownBlock[] {
  const pieces: string[] = [];
  for (const line of text.split("\n")) {
    if (line.length <= SECTION_TEXT_MAX) pieces.push(line);
    else {
      let cur = "";
      for (const part of line.split(", ")) {
        const next = cur ? `${cur}, ${part}` : part;
        if (next.length <= SECTION_TEXT_MAX) cur = next;
        else {
          if (cur) pieces.push(`${cur},`);
          cur = cutEscaped(part, SECTION_TEXT_MAX);
        }
      }
      pieces.push(cur);
    }
  }
  const chunks: string[] = [];
  let cur: string | undefined;
  for (const piece of pieces) {
    if (cur !== undefined && cur.length + 1 + piece.length > SECTION_TEXT_MAX) {
      chunks.push(cur);
      cur = piece;
    } else cur = cur === undefined ? piece : `${cur}\n${piece}`;
  }
  if (cur !== undefined) chunks.push(cur);
  return chunks.map((t) => ({ type: "section", text: shownAsWritten(t || " ") }));
}
