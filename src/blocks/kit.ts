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
