import { WebClient } from "@slack/web-api";
import type { KnownBlock } from "../blocks/kit.ts";
import type { Deps } from "../deps.ts";
import { quietLogger } from "./directory.ts";

/**
 * A client for messages only one person may read (tokens, organizer-only links and passcodes):
 * WebClient logs every request body at debug level, so this one keeps its debug and info lines
 * to itself. Warnings and errors, which never hold the body, still reach the app's log.
 */
export function quietClient(deps: Deps, client: WebClient): WebClient {
  return new WebClient(client.token, {
    slackApiUrl: client.slackApiUrl,
    logger: quietLogger(deps.logger),
  });
}

export interface Message {
  text: string;
  blocks?: KnownBlock[];
}

/**
 * Tells one user something only they may see: ephemeral in the channel they used, else a DM from
 * the app (chat.postMessage to the user id opens the app's DM). Slack refuses an ephemeral
 * message where the app is not a member (private channels, DMs and group DMs it is not in), so a
 * refusal falls back to the DM and nothing is lost.
 */
export async function tellUser(
  client: WebClient,
  user: string,
  message: Message,
  channel?: string,
): Promise<void> {
  if (channel && !channel.startsWith("D")) {
    try {
      await client.chat.postEphemeral({
        channel,
        user,
        text: message.text,
        ...(message.blocks ? { blocks: message.blocks } : {}),
      });
      return;
    } catch {
      // Not in that channel (or the app is not): the DM below still reaches them.
    }
  }
  await client.chat.postMessage({
    channel: user,
    text: message.text,
    ...(message.blocks ? { blocks: message.blocks } : {}),
  });
}
