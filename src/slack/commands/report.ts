import { reportAnswer, reportText } from "../../blocks/report.ts";
import { attendanceReport } from "../../domain/attendance.ts";
import { userText } from "../../domain/text.ts";
import { askedStem, renderReport, uploadReport } from "../../live/report-upload.ts";
import type { CommandContext } from "./context.ts";
import { eventArg } from "./event-arg.ts";

const USAGE = "/onair report <event> [files]";

/**
 * `/onair report <event> [files]`: the attendance report's figures, only for the asker; with
 * `files` (the organizer or an admin only), the chart and the CSV too, posted where they asked:
 * in the card's thread when the channel carries the card, else in the channel itself. Who may
 * ask for the figures is who may see them (domain/attendance.ts).
 */
export async function report(ctx: CommandContext): Promise<void> {
  const m = /^(.*?)(?:\s+files)?$/is.exec(ctx.args.trim());
  const wantsFiles = /\sfiles$/i.test(ctx.args.trim());
  const query = (m?.[1] ?? ctx.args).trim();
  const record = await eventArg(ctx, query, USAGE);
  const r = await attendanceReport(ctx.kit.deps, ctx.actor, record.eventId, ctx.channelId);
  if (!wantsFiles || !r.manager) {
    const hint =
      r.figures && r.figures.unique > 0 && r.manager
        ? `\nAdd \`files\` to have the chart and the CSV posted here: \`/onair report ${userText(record.eventId, 80)} files\`.`
        : "";
    // The files go into a channel for everyone there: the organizer's and admins' call, so a
    // member cannot fill the card's thread with copies (or the app's upload budget).
    const onlyManagers = wantsFiles
      ? "\nThe chart and the CSV are posted by the event's organizer or an admin; the figures above are yours alone."
      : "";
    await ctx.reply(`${reportAnswer(r.title, r.figures)}${hint}${onlyManagers}`);
    return;
  }
  const threadTs = r.record.cards[ctx.channelId]?.threadTs;
  if (!r.snapshot || !r.figures || r.figures.unique === 0) {
    await ctx.reply(reportAnswer(r.title, r.figures));
    return;
  }
  // E-mails only where the admin allowed them (the live card's thread), not in any channel a
  // manager types in, which may hold guests or another organisation's people.
  const withEmails = r.withEmails && threadTs !== undefined;
  const files = await renderReport(r.snapshot, ctx.kit.deps.now(), withEmails);
  await uploadReport(
    ctx.client,
    { channel: ctx.channelId, threadTs },
    askedStem(record.eventId, r.snapshot.instanceId),
    reportText(r.title, files.figures),
    files,
  );
  await ctx.reply(
    threadTs
      ? "The attendance chart and CSV are in the card's thread."
      : `The attendance chart and CSV are posted in this channel.${
          r.withEmails
            ? " The CSV leaves out e-mail addresses here: they are shown only in the card's thread."
            : ""
        }`,
  );
}
