import type { KnownBlock, WebClient } from "@slack/web-api";
import { verbatimSections } from "../blocks/kit.ts";
import {
  chartInputOf,
  postWithChartFallback,
  type ReportChartBlock,
  reportChartBlocks,
} from "../blocks/report-chart-blocks.ts";
import {
  type InstanceSnapshot,
  perMinute,
  type ReportFigures,
  reportCsv,
  reportFigures,
} from "../domain/report.ts";
import { chartPng } from "../domain/report-chart.ts";
import { slackErrorName } from "../slack-errors.ts";

/**
 * The attendance report's files, rendered and uploaded with Slack's current flow: one
 * files.getUploadURLExternal per file, the bytes POSTed to the URL it gives, then one
 * files.completeUploadExternal that shares both into the channel (and thread) with the figures
 * as the message. Used by the live engine when an instance ends and by `/onair report … files`.
 *
 * The figures go as `blocks` (verbatim mrkdwn sections), not as `initial_comment`: the comment is
 * plain message text, which Slack links on its own, so a title holding a URL would become a link
 * in the thread. Slack's reference: "If the initial_comment field is provided, the blocks field
 * is ignored", so only blocks are sent. After the figures' text come Slack's native line chart
 * and table of them (blocks/report-chart-blocks.ts); the PNG and CSV stay as files for export.
 */

export interface ReportFiles {
  figures: ReportFigures;
  png: Buffer;
  csv: string;
  /** Slack's native line chart and table of the same figures, after the text blocks. */
  chart: ReportChartBlock[];
}

export async function renderReport(
  snap: InstanceSnapshot,
  now: number,
  withEmails: boolean,
): Promise<ReportFiles> {
  const figures = reportFigures(snap, now);
  const png = await chartPng(snap, perMinute(snap, now));
  const csv = reportCsv(snap, now, withEmails);
  return { figures, png, csv, chart: reportChartBlocks(chartInputOf(snap, now)) };
}

/** A file name part from an instance id: no character a file name or Slack would mind. */
export function fileStem(eventId: string, instanceId: string): string {
  const safe = (s: string) => s.replace(/[^A-Za-z0-9_-]+/g, "-").slice(0, 40);
  return `attendance-${safe(eventId)}-${safe(instanceId)}`;
}

/**
 * The stem of files someone asked for (`/onair report … files`): not the instance's report's
 * (fileStem), so a lookup for that report after a lost answer never takes them for it.
 */
export function askedStem(eventId: string, instanceId: string): string {
  return `${fileStem(eventId, instanceId)}-asked`;
}

async function uploadOne(
  client: WebClient,
  filename: string,
  bytes: Uint8Array,
  altText: string | undefined,
): Promise<string> {
  const res = await client.files.getUploadURLExternal({
    filename,
    length: bytes.byteLength,
    ...(altText ? { alt_txt: altText } : {}),
  });
  if (!res.upload_url || !res.file_id)
    throw new Error("files.getUploadURLExternal answered no URL");
  const put = await fetch(res.upload_url, {
    method: "POST",
    body: bytes,
    headers: { "content-type": "application/octet-stream" },
    signal: AbortSignal.timeout(30_000),
  });
  await put.arrayBuffer().catch(() => undefined);
  if (!put.ok) throw new Error(`the file upload answered HTTP ${put.status}`);
  return res.file_id;
}

export async function uploadReport(
  client: WebClient,
  target: { channel: string; threadTs?: string | undefined },
  stem: string,
  message: string,
  files: ReportFiles,
  /** Called once the bytes are up, just before the share (which is what posts). */
  beforeShare?: () => Promise<void>,
): Promise<void> {
  const png = await uploadOne(
    client,
    `${stem}.png`,
    files.png,
    "Chart of attendees present per minute, with the event's state changes marked",
  );
  const csv = await uploadOne(client, `${stem}.csv`, Buffer.from(files.csv, "utf8"), undefined);
  await beforeShare?.();
  // A surface that does not take the native chart and table (invalid_blocks) gets the report
  // without them, once; the PNG and CSV carry the same figures either way.
  const share = (blocks: readonly unknown[]) => {
    const shared: [{ id: string; title: string }, { id: string; title: string }] = [
      { id: png, title: "Attendance chart" },
      { id: csv, title: "Attendance (CSV)" },
    ];
    const shown = blocks as KnownBlock[];
    return target.threadTs
      ? client.files.completeUploadExternal({
          files: shared,
          channel_id: target.channel,
          thread_ts: target.threadTs,
          blocks: shown,
        })
      : client.files.completeUploadExternal({
          files: shared,
          channel_id: target.channel,
          blocks: shown,
        });
  };
  await postWithChartFallback(share, verbatimSections(message), files.chart, slackErrorName);
}
