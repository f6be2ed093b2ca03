import { SlackApiError } from "./errors.ts";
import { randomHex } from "./ids.ts";
import { MessageStore } from "./messages.ts";
import {
  type EphemeralMessage,
  type Json,
  type Message,
  type MessageContent,
  RESPONSE_URL_MAX_USES,
  RESPONSE_URL_TTL_MS,
  type ResponseUrlContext,
  type ResponseUrlRecord,
  TRIGGER_TTL_MS,
  type TriggerRecord,
  withIds,
} from "./model.ts";

/**
 * What an interaction hands the app: trigger_ids (once, within TRIGGER_TTL_MS) and
 * response_urls (a few uses within RESPONSE_URL_TTL_MS), and what Slack does with a POST to one.
 */
export class Interactions extends MessageStore {
  private readonly triggers = new Map<string, TriggerRecord>();
  private readonly responseUrls = new Map<string, ResponseUrlRecord>();

  /** A fresh trigger_id for this user: usable once, within TRIGGER_TTL_MS. */
  issueTriggerId(user: string): string {
    const id = `${this.nowSec()}${Math.floor(Math.random() * 1000)}.${this.team.id.replace(/\D/g, "") || "1"}${Math.floor(Math.random() * 1e6)}.${randomHex(16)}`;
    this.triggers.set(id, { user, issuedAt: this.now(), used: false });
    return id;
  }

  consumeTrigger(id: string): string {
    const t = this.triggers.get(id);
    if (!t) throw new SlackApiError("invalid_trigger_id");
    if (t.used) throw new SlackApiError("exchanged_trigger_id");
    if (this.now() - t.issuedAt > TRIGGER_TTL_MS) throw new SlackApiError("expired_trigger_id");
    t.used = true;
    return t.user;
  }

  createResponseUrl(ctx: ResponseUrlContext): string {
    const id = `${this.team.id}/${randomHex(8)}/${randomHex(12)}`;
    this.responseUrls.set(id, { ...ctx, createdAt: this.now(), uses: 0 });
    return `${this.origin}/response/${id}`;
  }

  /**
   * A POST to a response_url, applied as Slack applies it. Returns the message or ephemeral
   * it produced. Errors: expired_url / used_url (unknown or spent), then the content errors.
   */
  respond(id: string, body: Json): Message | EphemeralMessage | undefined {
    const r = this.responseUrls.get(id);
    if (!r || this.now() - r.createdAt > RESPONSE_URL_TTL_MS) {
      throw new SlackApiError("expired_url");
    }
    if (r.uses >= RESPONSE_URL_MAX_USES) throw new SlackApiError("used_url");
    r.uses++;
    const ch = this.channels.get(r.channel);
    if (!ch) throw new SlackApiError("channel_not_found");
    const content: MessageContent = {
      text: typeof body.text === "string" ? body.text : undefined,
      blocks: Array.isArray(body.blocks) ? body.blocks : undefined,
      attachments: Array.isArray(body.attachments) ? body.attachments : undefined,
    };
    const truthy = (v: unknown) => v === true || v === "true";
    if (truthy(body.delete_original)) {
      if (r.messageTs === undefined) throw new SlackApiError("message_not_found");
      if (r.ephemeral) {
        const e = this.ephemerals.find((x) => x.ts === r.messageTs && x.user === r.user);
        if (!e) throw new SlackApiError("message_not_found");
        e.deleted = true;
        return e;
      }
      return this.deleteMessage(ch, r.messageTs, undefined);
    }
    if (truthy(body.replace_original)) {
      if (r.messageTs === undefined) throw new SlackApiError("message_not_found");
      if (r.ephemeral) {
        const e = this.ephemerals.find((x) => x.ts === r.messageTs && x.user === r.user);
        if (!e) throw new SlackApiError("message_not_found");
        this.checkContent(content, true);
        e.text = content.text ?? "";
        if (content.blocks !== undefined) e.blocks = withIds(content.blocks);
        else delete e.blocks;
        e.replaced = true;
        return e;
      }
      return this.updateMessage(ch, r.messageTs, undefined, content, "response_url");
    }
    const threadTs = typeof body.thread_ts === "string" ? body.thread_ts : r.threadTs;
    if (body.response_type === "in_channel") {
      // A response_url may post where the app is not a member: the user invoked it there.
      return this.postMessage(
        ch,
        this.app.botUserId,
        { ...content, thread_ts: threadTs },
        { via: "response_url" },
      );
    }
    return this.postEphemeral(ch, r.user, { ...content, thread_ts: threadTs }, "response_url");
  }
}
