import { NO_UNFURL, verbatimSections } from "../../blocks/kit.ts";
import { type Pending, subtract } from "../digest.ts";
import type { ChannelPosting, DigestPosting } from "../live-record.ts";
import type { PostSpec } from "../post-once.ts";
import { digestMetadata, type FoundDigest, findDigest } from "../recover.ts";
import type { PostContext } from "./context.ts";

function digested(c: ChannelPosting, taken: Pending): void {
  c.pending = subtract(c.pending, taken);
  delete c.digestPosting;
  c.lastThreadAt = Date.now();
}

/**
 * What a found digest took out of the pending notices: its counts, and as many of the mark's
 * names as it can have shown (names are kept in arrival order, so they are the first ones).
 */
function tookOf(found: FoundDigest, marked: Pending): Pending {
  const t = found.taken;
  if (!t) return marked;
  return { joined: t.joined, left: t.left, sample: marked.sample.slice(0, t.joined + t.left) };
}

/**
 * A digest in the card's thread: exactly what was pending when it went out, under a sequence
 * number. Not found after a lost answer, the same seq goes out with everything pending now.
 */
export function digest(
  { port, ch, c, client }: PostContext,
  cardTs: string,
  textOf: (taken: Pending) => Promise<string>,
): PostSpec<DigestPosting, FoundDigest, void> {
  return {
    kind: "digest",
    marked: () => c.digestPosting,
    find: (mark, progress) =>
      findDigest(client, ch, cardTs, port.eventId, mark.seq, mark.at, progress),
    // Posted before the answer was lost: take out what it took, post nothing. What it took is
    // read from the message, not the mark: a seq not found (its post still on its way) goes out
    // again with everything pending then, and a later owner may find either of the two posts;
    // taking the mark's counts for the earlier one's would drop the joins only the mark holds.
    adopt: (found, mark) => digested(c, tookOf(found, mark.taken)),
    mark: (now) => {
      const seq = c.digestPosting?.seq ?? c.seq + 1;
      c.seq = seq;
      c.digestPosting = { seq, taken: structuredClone(c.pending), at: now };
    },
    unmark: () => {
      delete c.digestPosting;
    },
    call: async () => {
      const mark = c.digestPosting;
      if (!mark) throw new Error("live: a digest went to be posted without its mark");
      const text = await textOf(mark.taken);
      await client.chat.postMessage({
        channel: ch,
        thread_ts: cardTs,
        text,
        // Attendees' names are outside text: shown verbatim, never unfurled.
        blocks: verbatimSections(text),
        ...NO_UNFURL,
        metadata: digestMetadata(port.eventId, mark.seq, mark.taken),
      });
    },
    record: () => {
      const mark = c.digestPosting;
      if (mark) digested(c, mark.taken);
    },
  };
}
