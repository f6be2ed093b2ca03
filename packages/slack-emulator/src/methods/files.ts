import { argumentError, SlackApiError } from "../errors.ts";
import { randomHex } from "../ids.ts";
import type { Channel } from "../model.ts";
import type { Json, Workspace } from "../workspace.ts";
import { actor, type CallContext, type MethodSpec } from "./types.ts";

/**
 * files.* (Slack's current upload flow), as Slack's reference has them:
 *
 * - files.getUploadURLExternal (files:write, tier 4): `filename` and `length` required; answers
 *   an upload URL (served by the emulator, /upload/v1/{file_id}) and the file's id.
 * - the upload: a POST of the bytes (raw, or one multipart part) to that URL; answers 200.
 * - files.completeUploadExternal (files:write, tier 4): `files` required, a JSON array of
 *   {id, title?}; every id must name a file whose bytes arrived and that is not yet completed
 *   (else file_not_found). With channel_id the files are shared there, in thread_ts's thread,
 *   as one message whose text is initial_comment; the bot must be in the channel
 *   (not_in_channel). Without channel_id they stay private to the uploader.
 * - chat.unfurl: methods/unfurl.ts, on the links recorded here.
 * - a share into a read-only channel, a thread-only channel outside a thread, or a locked thread
 *   is posting_to_channel_denied; `blocks` on the share are checked (invalid_blocks).
 */

/**
 * A share the channel's posting limits forbid (Channel.posting, a locked thread): Slack's
 * reference gives files.completeUploadExternal one error for it, posting_to_channel_denied.
 */
function deniesPosting(ws: Workspace, ch: Channel, threadTs: string | undefined): boolean {
  if (ch.posting === "read_only") return true;
  if (ch.posting === "thread_only" && threadTs === undefined) return true;
  return threadTs !== undefined && ws.threadParent(ch, threadTs)?.thread_locked === true;
}

export interface StoredFile {
  readonly id: string;
  readonly name: string;
  readonly length: number;
  readonly altText: string | undefined;
  readonly owner: string;
  bytes: Buffer | undefined;
  title: string | undefined;
  completed: boolean;
  /** Where it was shared: channel and message ts. */
  shares: Array<{ channel: string; ts: string }>;
}

export interface SharedLinks {
  readonly channel: string;
  readonly ts: string;
  readonly urls: readonly string[];
  unfurls: Record<string, unknown>;
}

interface FileState {
  readonly files: Map<string, StoredFile>;
  /** link_shared deliveries: by unfurl_id, and by channel + ts */
  readonly links: Map<string, SharedLinks>;
  /** shares answered and not yet landed (Workspace.fileShareDelayMs) */
  readonly pending: Set<Promise<void>>;
}

const states = new WeakMap<Workspace, FileState>();

export function fileState(ws: Workspace): FileState {
  let s = states.get(ws);
  if (!s) {
    s = { files: new Map(), links: new Map(), pending: new Set() };
    states.set(ws, s);
  }
  return s;
}

/** Resolves once every file share answered so far has landed in its channel (or been dropped). */
export async function sharesLanded(ws: Workspace): Promise<void> {
  const { pending } = fileState(ws);
  while (pending.size > 0) await Promise.all([...pending]);
}

/** Stores an upload's bytes; false when the URL names no file waiting for them. */
export function receiveUpload(ws: Workspace, fileId: string, bytes: Buffer): boolean {
  const f = fileState(ws).files.get(fileId);
  if (!f || f.completed) return false;
  f.bytes = bytes;
  return true;
}

/** A message the driver posted with links in a registered domain: chat.unfurl may answer it. */
export function recordSharedLinks(
  ws: Workspace,
  channel: string,
  ts: string,
  urls: readonly string[],
): string {
  const unfurlId = `${channel}.${ts}.${randomHex(6)}`;
  const rec: SharedLinks = { channel, ts, urls, unfurls: {} };
  const s = fileState(ws);
  s.links.set(unfurlId, rec);
  s.links.set(`${channel}:${ts}`, rec);
  return unfurlId;
}

export function fileJson(ws: Workspace, f: StoredFile): Json {
  return {
    id: f.id,
    name: f.name,
    title: f.title ?? f.name,
    mimetype: f.name.endsWith(".png")
      ? "image/png"
      : f.name.endsWith(".csv")
        ? "text/csv"
        : "application/octet-stream",
    filetype: f.name.split(".").pop() ?? "",
    size: f.bytes?.length ?? 0,
    user: f.owner,
    url_private: `${ws.origin}/files/${f.id}/${encodeURIComponent(f.name)}`,
    ...(f.altText ? { alt_txt: f.altText } : {}),
  };
}

const ALT_TXT_MAX = 1000;

interface FileRef {
  id: string;
  title: string | undefined;
}

function fileRefs(ctx: CallContext): FileRef[] {
  const list = ctx.args.list("files", "invalid_arguments") ?? [];
  if (list.length === 0) throw argumentError("invalid_arguments", ["[ERROR] files is empty"]);
  return list.map((f) => {
    const o = f as { id?: unknown; title?: unknown };
    if (typeof f !== "object" || f === null || typeof o.id !== "string" || o.id === "") {
      throw argumentError("invalid_arguments", ["[ERROR] each file needs an id"]);
    }
    return { id: o.id, title: typeof o.title === "string" ? o.title : undefined };
  });
}

export const FILES: Readonly<Record<string, MethodSpec>> = {
  "files.getUploadURLExternal": {
    auth: true,
    errors: ["alt_txt_too_large"],
    handler: (ctx) => {
      const t = actor(ctx);
      const length = ctx.args.num("length");
      if (length === undefined || !Number.isInteger(length) || length <= 0) {
        throw argumentError("invalid_arguments", ["[ERROR] length must be a positive integer"]);
      }
      const name = ctx.args.resolve("filename", "invalid_arguments");
      const altText = ctx.args.str("alt_txt");
      if ((altText?.length ?? 0) > ALT_TXT_MAX) throw new SlackApiError("alt_txt_too_large");
      const id = `F${randomHex(5).toUpperCase()}`;
      fileState(ctx.ws).files.set(id, {
        id,
        name,
        length,
        altText,
        owner: t.userId,
        bytes: undefined,
        title: undefined,
        completed: false,
        shares: [],
      });
      return { upload_url: `${ctx.ws.origin}/upload/v1/${id}`, file_id: id };
    },
  },

  "files.completeUploadExternal": {
    auth: true,
    errors: [
      "file_not_found",
      "channel_not_found",
      "not_in_channel",
      "invalid_channel",
      "invalid_blocks",
      "posting_to_channel_denied",
    ],
    handler: (ctx) => {
      const t = actor(ctx);
      const refs = fileRefs(ctx);
      const blocks = ctx.args.list("blocks", "invalid_blocks");
      const { files } = fileState(ctx.ws);
      const found = refs.map((r) => {
        const f = files.get(r.id);
        if (!f || f.completed || f.bytes === undefined || f.owner !== t.userId) {
          throw new SlackApiError("file_not_found");
        }
        return { f, title: r.title };
      });
      const channelRef = ctx.args.str("channel_id");
      const threadTs = ctx.args.str("thread_ts");
      let share: (() => void) | undefined;
      if (channelRef !== undefined) {
        const ch = ctx.ws.visibleChannel(channelRef, t.userId);
        if (ch.is_archived) throw new SlackApiError("invalid_channel");
        if (!ch.members.has(t.userId)) throw new SlackApiError("not_in_channel");
        if (deniesPosting(ctx.ws, ch, threadTs)) {
          throw new SlackApiError("posting_to_channel_denied");
        }
        const comment = ctx.args.str("initial_comment");
        // Slack's reference: with initial_comment, blocks are ignored (still checked here).
        const content = {
          text: comment ?? "",
          ...(comment === undefined && blocks !== undefined ? { blocks } : {}),
          thread_ts: threadTs,
        };
        ctx.ws.checkContent({ ...content, blocks }, false);
        const delayed = ctx.ws.fileShareDelayMs > 0;
        // The answer's warnings are known now, not when the share lands.
        if (delayed && threadTs !== undefined && !ctx.ws.threadParent(ch, threadTs)) {
          ctx.warn("thread_ts_not_found");
        }
        const post = () => {
          const msg = ctx.ws.postMessage(
            ch,
            t.userId,
            content,
            {
              via: "files.completeUploadExternal",
              ...(delayed ? {} : { warn: ctx.warn }),
              maxText: 40_000,
            },
            true,
          );
          for (const { f } of found) f.shares.push({ channel: ch.id, ts: msg.ts });
          msg.files = found.map(({ f }) => fileJson(ctx.ws, f));
        };
        share = post;
      } else if (threadTs !== undefined) {
        throw argumentError("invalid_arguments", ["[ERROR] thread_ts needs channel_id"]);
      }
      for (const { f, title } of found) {
        f.completed = true;
        f.title = title;
      }
      // Slack shares asynchronously: the answer comes first, the message a little later
      // (Workspace.fileShareDelayMs). A share that can no longer be made is dropped, as Slack's
      // intermittent silent drops are.
      if (share) {
        const delay = ctx.ws.fileShareDelayMs;
        if (delay <= 0) share();
        else {
          const run = share;
          const pending = fileState(ctx.ws).pending;
          const landed = new Promise<void>((resolve) => {
            setTimeout(() => {
              try {
                run();
              } catch {
                // the channel went away meanwhile: nothing is shared
              }
              pending.delete(landed);
              resolve();
            }, delay).unref();
          });
          pending.add(landed);
        }
      }
      return { files: found.map(({ f }) => ({ id: f.id, title: f.title ?? f.name })) };
    },
  },
};
