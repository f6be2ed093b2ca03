/**
 * Who a message would notify, from its mrkdwn as Slack parses it: `<@U…>` (a person),
 * `<!subteam^S…>` (a user group), `<!channel>`, `<!here>`, `<!everyone>`, each optionally with a
 * `|label`; in rich_text blocks the `user`, `usergroup` and `broadcast` elements. Escaped forms
 * (`&lt;!channel&gt;`) are text and ping nobody. Sources: api.slack.com/reference/surfaces/formatting
 * (mentioning users and groups, special mentions) and docs.slack.dev's rich text block reference.
 *
 * Which surfaces notify:
 * - the message's `text` and the mrkdwn text objects of its blocks (section text and fields,
 *   context elements, markdown blocks) and rich_text elements: yes; plain_text objects are not
 *   parsed;
 * - attachments: no (sensu-plugins/sensu-plugins-slack#71: mentions notify only from `text`);
 *   recorded with `notified: false`;
 * - ephemeral messages: shown to one person only and notify nobody; recorded, `notified: false`;
 * - an edit (chat.update, replace_original) adding a mention: Slack does not notify for it;
 *   recorded, `notified: false`;
 * - a message from the app in a DM or group DM notifies the people in it (kind `dm`);
 * - `<!everyone>` notifies only in the workspace's general channel; `<!here>` is taken to reach
 *   every member (the emulator has no presence); people outside the conversation are not
 *   notified (`reason: "not_in_channel"`).
 */

export type MentionKind = "user" | "usergroup" | "channel" | "here" | "everyone";

export interface Mention {
  readonly kind: MentionKind;
  /** the user or user group id */
  readonly id?: string;
}

const TOKEN = /<(@[UW][A-Z0-9]+|!subteam\^[A-Z0-9]+|!channel|!here|!everyone|!group)(?:\|[^>]*)?>/g;

/** Every mention in one mrkdwn string, in order. */
export function mentionsInText(text: string): Mention[] {
  const out: Mention[] = [];
  for (const m of text.matchAll(TOKEN)) {
    const t = m[1]!;
    if (t.startsWith("@")) out.push({ kind: "user", id: t.slice(1) });
    else if (t.startsWith("!subteam^")) out.push({ kind: "usergroup", id: t.slice(9) });
    else if (t === "!group" || t === "!channel") out.push({ kind: "channel" });
    else out.push({ kind: t.slice(1) as MentionKind });
  }
  return out;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

function mrkdwn(v: unknown, into: string[]): void {
  if (isObj(v) && v.type === "mrkdwn" && typeof v.text === "string") into.push(v.text);
}

function richText(el: unknown, out: Mention[]): void {
  if (!isObj(el)) return;
  if (el.type === "user" && typeof el.user_id === "string")
    out.push({ kind: "user", id: el.user_id });
  if (el.type === "usergroup" && typeof el.usergroup_id === "string") {
    out.push({ kind: "usergroup", id: el.usergroup_id });
  }
  if (
    el.type === "broadcast" &&
    (el.range === "here" || el.range === "channel" || el.range === "everyone")
  ) {
    out.push({ kind: el.range });
  }
  if (Array.isArray(el.elements)) for (const e of el.elements) richText(e, out);
}

/** Every mention in a message's blocks (mrkdwn text objects and rich text), in order. */
export function mentionsInBlocks(blocks: readonly unknown[]): Mention[] {
  const out: Mention[] = [];
  for (const b of blocks) {
    if (!isObj(b)) continue;
    const texts: string[] = [];
    mrkdwn(b.text, texts);
    if (Array.isArray(b.fields)) for (const f of b.fields) mrkdwn(f, texts);
    if (b.type === "context" && Array.isArray(b.elements))
      for (const e of b.elements) mrkdwn(e, texts);
    if (b.type === "markdown" && typeof b.text === "string") texts.push(b.text);
    for (const t of texts) out.push(...mentionsInText(t));
    if (b.type === "rich_text") richText(b, out);
  }
  return out;
}

/** Every mention in legacy attachments (text, pretext, fields, and their blocks). */
export function mentionsInAttachments(attachments: readonly unknown[]): Mention[] {
  const out: Mention[] = [];
  for (const a of attachments) {
    if (!isObj(a)) continue;
    for (const k of ["text", "pretext", "title"]) {
      if (typeof a[k] === "string") out.push(...mentionsInText(a[k] as string));
    }
    if (Array.isArray(a.fields)) {
      for (const f of a.fields)
        if (isObj(f) && typeof f.value === "string") out.push(...mentionsInText(f.value));
    }
    if (Array.isArray(a.blocks)) out.push(...mentionsInBlocks(a.blocks));
  }
  return out;
}

export type NotificationSurface = "text" | "blocks" | "attachments" | "dm";

export interface Notification {
  /** 1, 2, 3… in the order messages were made */
  readonly seq: number;
  /** what made the message: a Web API method, "response_url", "command_ack", "scheduled", "user" */
  readonly via: string;
  readonly channel: string;
  readonly ts: string;
  /** who wrote it (the bot user for the app) */
  readonly author: string;
  readonly kind: MentionKind | "dm";
  /** the mentioned user or user group */
  readonly target?: string;
  readonly surface: NotificationSurface;
  /** who would get a notification (empty when nobody would) */
  readonly users: readonly string[];
  readonly notified: boolean;
  /** why nobody is notified, when nobody is */
  readonly reason?: "ephemeral" | "edit" | "attachments" | "not_in_channel" | "outside_general";
  readonly ephemeral: boolean;
}
