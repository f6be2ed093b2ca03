import type { RespondFn } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import type { Actor } from "../../domain/directory.ts";
import type { Subcommand } from "../../ids.ts";
import type { ListenerKit } from "../kit.ts";

/** What a subcommand's handler gets: the acting user, the words after the subcommand, replies. */
export interface CommandContext {
  readonly kit: ListenerKit;
  readonly actor: Actor;
  readonly subcommand: Subcommand;
  /** The text after the subcommand, trimmed, in Slack's escaped form (see text.ts). */
  readonly args: string;
  readonly channelId: string;
  readonly triggerId: string;
  /** The interactive client (views.open, chat.postEphemeral); never used for bulk posting. */
  readonly client: WebClient;
  readonly respond: RespondFn;
  /** Answers the user privately, in one plain sentence and a next step. */
  reply(text: string): Promise<void>;
}

export type CommandHandler = (ctx: CommandContext) => Promise<void>;
