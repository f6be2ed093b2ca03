import { NO_UNFURL } from "../../blocks/kit.ts";
import type { PostSpec } from "../post-once.ts";
import { counterMetadata, findCounter } from "../recover.ts";
import type { PostContext } from "./context.ts";

/** The running count in the card's thread (posted once; later changes are updates in place). */
export function counter(
  { port, ch, c, client }: PostContext,
  cardTs: string,
  text: string,
): PostSpec<number, string, string | undefined> {
  return {
    kind: "counter",
    marked: () => c.counterPosting,
    find: (since, progress) => findCounter(client, ch, cardTs, port.eventId, since, progress),
    adopt: (ts) => {
      // Posted before the answer was lost: the next turn brings its text up to date.
      c.counterTs = ts;
      delete c.counterHash;
    },
    mark: (now) => {
      c.counterPosting = now;
    },
    unmark: () => {
      delete c.counterPosting;
    },
    call: async () => {
      const res = await client.chat.postMessage({
        channel: ch,
        thread_ts: cardTs,
        text,
        ...NO_UNFURL,
        metadata: counterMetadata(port.eventId),
      });
      return res.ts;
    },
    record: (ts) => {
      if (ts) c.counterTs = ts;
      c.counterHash = text;
    },
  };
}
