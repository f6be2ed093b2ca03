import type { ChannelPosting } from "../live-record.ts";
import { LookupThrottled } from "../post-errors.ts";
import { methodCall, type PostSpec } from "../post-once.ts";
import { findReport } from "../recover.ts";
import { fileStem, type ReportFiles, uploadReport } from "../report-upload.ts";
import type { PostContext } from "./context.ts";

/** Reported instance ids kept per channel (the engine keeps MAX_INSTANCES instances). */
const REPORTED_KEPT = 10;

export function reported(c: ChannelPosting, instanceId: string): void {
  c.reported = [...(c.reported ?? []), instanceId].slice(-REPORTED_KEPT);
  delete c.reportPosting;
}

type Mark = { instanceId: string; at: number };

/**
 * The attendance report in the card's thread, once per instance and channel. Its mark is set
 * just before the share (drawing and the byte uploads share nothing), so the mark's time is the
 * share's. Slack shares an upload asynchronously (its answer comes before the message): one not
 * in the thread yet may still land, so a lookup that finds nothing waits until `settleMs` after
 * the mark before the report goes out again.
 */
export function report(
  { port, ch, c, client }: PostContext,
  cardTs: string,
  due:
    | { instanceId: string; draw: () => Promise<{ files: ReportFiles; text: string }> }
    | undefined,
  settleMs: number,
): PostSpec<Mark, string, void> {
  return {
    kind: "report",
    marked: () => c.reportPosting,
    find: (mark, progress) =>
      methodCall(
        findReport(client, ch, cardTs, fileStem(port.eventId, mark.instanceId), mark.at, progress),
      ),
    adopt: (_ts, mark) => reported(c, mark.instanceId),
    notFound: (mark) => {
      const settled = mark.at + settleMs;
      if (Date.now() < settled) throw new LookupThrottled(settled - Date.now(), "settling");
      return due ? "post" : "later";
    },
    marksInCall: true,
    mark: (now) => {
      if (due) c.reportPosting = { instanceId: due.instanceId, at: now };
    },
    unmark: () => {
      delete c.reportPosting;
    },
    call: async (markNow) => {
      if (!due) return;
      const { files, text } = await due.draw();
      await uploadReport(
        client,
        { channel: ch, threadTs: cardTs },
        fileStem(port.eventId, due.instanceId),
        text,
        files,
        markNow,
      );
    },
    record: () => {
      if (due) reported(c, due.instanceId);
    },
  };
}
