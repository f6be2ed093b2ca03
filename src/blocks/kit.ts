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

/** Slack's limit on a section's text (Block Kit reference). */
const SECTION_TEXT_MAX = 3000;

/**
 * mrkdwn shown as written: sections with `verbatim: true`, so a URL inside text that came from
 * outside (an attendee's name) stays text instead of becoming a link Slack made on its own. Split
 * at line ends to keep each section within Slack's limit; a single line over it is cut.
 */
export function verbatimSections(text: string): KnownBlock[] {
  const chunks: string[] = [];
  let cur = "";
  for (const line of text.split("\n")) {
    const piece = line.length > SECTION_TEXT_MAX ? truncate(line, SECTION_TEXT_MAX) : line;
    if (cur && cur.length + 1 + piece.length > SECTION_TEXT_MAX) {
      chunks.push(cur);
      cur = piece;
    } else cur = cur ? `${cur}\n${piece}` : piece;
  }
  if (cur) chunks.push(cur);
  return chunks.map((t) => ({
    type: "section",
    text: { type: "mrkdwn", text: t, verbatim: true },
  }));
}
