import type { UnfurlInfo } from "../domain/unfurl.ts";
import { stateInWords } from "./event-card.ts";
import { type KnownBlock, shownAsWritten, slackDate, userText } from "./kit.ts";

/** The compact card under a pasted join link: title, when (reader's zone), state and who is in. */
export function unfurlBlocks(info: UnfurlInfo): { blocks: KnownBlock[] } {
  const { event } = info;
  const state = info.cancelled
    ? ":no_entry: Cancelled"
    : stateInWords(info.state ?? event.status ?? "NOT_STARTED");
  const now =
    info.cancelled || info.present === undefined ? "" : ` · attendees now *${info.present}*`;
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
