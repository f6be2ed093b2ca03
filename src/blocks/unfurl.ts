import type { UnfurlInfo } from "../domain/unfurl.ts";
import { liveStateInWords } from "./event-card.ts";
import { type KnownBlock, shownAsWritten, slackDate, userText } from "./kit.ts";

/** The compact card under a pasted join link: title, when (reader's zone), state and who is in. */
export function unfurlBlocks(info: UnfurlInfo): { blocks: KnownBlock[] } {
  const { event } = info;
  const ended = !info.cancelled && info.endedAt !== undefined;
  const state = info.cancelled
    ? ":no_entry: Cancelled"
    : liveStateInWords(info.state ?? event.status ?? "NOT_STARTED", info);
  const now =
    info.cancelled || info.present === undefined
      ? ""
      : ended
        ? ` · peak *${info.peak ?? 0}* · unique *${info.unique ?? 0}* · present at the end *${info.present}*`
        : ` · attendees now *${info.present}*`;
  return {
    blocks: [
      {
        type: "section",
        text: shownAsWritten(`*${userText(event.title, 150)}*\n${slackDate(event.start)}`),
      },
      {
        type: "context",
        elements: [shownAsWritten(`${state}${now} · _On Air_`)],
      },
    ],
  };
}
