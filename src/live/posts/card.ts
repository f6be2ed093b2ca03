import { NO_UNFURL } from "../../blocks/kit.ts";
import type { RenderedCard } from "../card.ts";
import type { PostSpec } from "../post-once.ts";
import { cardMetadata, findCard } from "../recover.ts";
import type { PostContext } from "./context.ts";

type Found = { ts: string; hash: string | undefined };

/**
 * A channel's first card (later changes are updates in place, idempotent, with no mark). Found
 * after a lost answer by its metadata, which names the event and the card's hash.
 */
export function firstCard(
  { port, ch, c, client }: PostContext,
  card: RenderedCard,
): PostSpec<number, Found, string> {
  return {
    kind: "card",
    marked: () => c.cardPosting,
    find: (since, progress) => findCard(client, ch, port.eventId, since, progress),
    adopt: (found) => {
      c.cardTs = found.ts;
      if (found.hash) c.cardHash = found.hash;
      else delete c.cardHash;
      // A new card has a new thread: whatever refused the old one does not hold for it.
      delete c.threadBlocked;
    },
    mark: (now) => {
      c.cardPosting = now;
    },
    unmark: () => {
      delete c.cardPosting;
    },
    call: async () => {
      const res = await client.chat.postMessage({
        channel: ch,
        text: card.text,
        blocks: card.blocks,
        ...NO_UNFURL,
        metadata: cardMetadata(port.eventId, card.hash),
      });
      if (!res.ts) throw new Error("chat.postMessage answered without a ts");
      return res.ts;
    },
    record: (ts) => {
      c.cardTs = ts;
      c.cardHash = card.hash;
      delete c.threadBlocked;
    },
  };
}
