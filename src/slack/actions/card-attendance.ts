import type { AllMiddlewareArgs, App, BlockAction, SlackActionMiddlewareArgs } from "@slack/bolt";
import { reportAnswer } from "../../blocks/report.ts";
import { attendanceReport } from "../../domain/attendance.ts";
import { CARD_ACTIONS } from "../../ids.ts";
import { reportFailure } from "../failure.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { tellUser } from "../reply.ts";
import { actionValue, sourceChannel } from "./payload.ts";

/**
 * The card's Attendance button: the attendance report's figures (the same as `/onair report`
 * and the thread's report), ephemerally, to whoever pressed it.
 */
export function register(app: App, kit: ListenerKit): void {
  app.action<BlockAction>(
    CARD_ACTIONS.attendance,
    async ({
      ack,
      body,
      client,
      context,
    }: SlackActionMiddlewareArgs<BlockAction> & AllMiddlewareArgs) => {
      await ack();
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      const channel = sourceChannel(body);
      // Ephemeral to the presser in the channel itself, where they clicked: a response_url from
      // a card with replies answers in its thread, where nobody is looking. Where the app may
      // not post ephemerally (not a member), the answer comes as a DM instead.
      const tell = async (text: string) => {
        await tellUser(client, actor.user, { text }, channel);
      };
      try {
        const report = await attendanceReport(kit.deps, actor, actionValue(body), channel);
        await tell(reportAnswer(report.title, report.figures));
      } catch (err) {
        await reportFailure(kit.deps, "attendance", err, tell);
      }
    },
  );
}
