import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type {
  Channel,
  Message,
  ScheduledMessage,
  SlackView,
  Workspace,
} from "@onair/slack-emulator";
import { debouncedSave } from "../sandbox/persist.ts";

/**
 * The emulated workspace's conversations kept across restarts of the playground: channels
 * (with DMs), messages, scheduled messages and App Home views. Not kept, as a Slack client
 * forgets them on reload: ephemeral messages (they may carry a just-minted token, which must
 * never reach a file) and open modals. Nor tokens (a fresh bot token per run).
 */

const FORMAT = 1;

interface SavedChannel {
  id: string;
  name: string;
  is_private: boolean;
  is_im: boolean;
  /** absent in files saved before group DMs were modelled */
  is_mpim?: boolean;
  is_general: boolean;
  is_archived: boolean;
  created: number;
  creator: string;
  user?: string;
  members: string[];
  topic: string;
  purpose: string;
  messages: Message[];
}

interface SavedWorkspace {
  format: number;
  team: string;
  channels: SavedChannel[];
  scheduled: ScheduledMessage[];
  homes: Array<{ user: string; view: SlackView }>;
}

export function serializeWorkspace(ws: Workspace): SavedWorkspace {
  return {
    format: FORMAT,
    team: ws.team.id,
    channels: [...ws.channels.values()].map((c) => ({
      id: c.id,
      name: c.name,
      is_private: c.is_private,
      is_im: c.is_im,
      is_mpim: c.is_mpim,
      is_general: c.is_general,
      is_archived: c.is_archived,
      created: c.created,
      creator: c.creator,
      ...(c.user !== undefined && { user: c.user }),
      members: [...c.members],
      topic: c.topic,
      purpose: c.purpose,
      messages: c.messages,
    })),
    scheduled: [...ws.scheduled.values()],
    homes: [...ws.homeViews.entries()].flatMap(([user, id]) => {
      const rec = ws.views.get(id);
      return rec ? [{ user, view: rec.view }] : [];
    }),
  };
}

/** Applies a saved state onto a freshly seeded workspace of the same team. */
export function restoreWorkspace(ws: Workspace, saved: SavedWorkspace): void {
  if (saved.format !== FORMAT || saved.team !== ws.team.id) return;
  for (const s of saved.channels) {
    const existing = ws.channels.get(s.id);
    if (existing) {
      existing.messages.splice(0, existing.messages.length, ...s.messages);
      existing.members.clear();
      for (const m of s.members) existing.members.add(m);
      existing.topic = s.topic;
      existing.purpose = s.purpose;
      existing.is_archived = s.is_archived;
      continue;
    }
    const ch: Channel = {
      id: s.id,
      name: s.name,
      is_private: s.is_private,
      is_im: s.is_im,
      is_mpim: s.is_mpim === true,
      is_general: s.is_general,
      is_archived: s.is_archived,
      created: s.created,
      creator: s.creator,
      ...(s.user !== undefined && { user: s.user }),
      members: new Set(s.members),
      topic: s.topic,
      purpose: s.purpose,
      messages: s.messages,
      deleted: [],
    };
    ws.channels.set(ch.id, ch);
  }
  for (const s of saved.scheduled) ws.scheduled.set(s.id, s);
  for (const h of saved.homes) {
    if (!ws.users.has(h.user)) continue;
    ws.views.set(h.view.id, { view: h.view, user: h.user, closed: false, errors: undefined });
    ws.homeViews.set(h.user, h.view.id);
  }
}

/** Reads the file if there is one; a corrupt file is reported and ignored (the playground starts fresh). */
export function loadWorkspaceFile(ws: Workspace, file: string): "restored" | "none" | "corrupt" {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return "none";
    throw err;
  }
  try {
    restoreWorkspace(ws, JSON.parse(text) as SavedWorkspace);
    return "restored";
  } catch {
    return "corrupt";
  }
}

export function saveWorkspaceFile(ws: Workspace, file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(serializeWorkspace(ws)));
  // rename is atomic: a crash mid-write leaves the previous file whole.
  renameSync(tmp, file);
}

export interface WorkspaceSaver {
  /** Something changed: save within the debounce window. */
  touch(): void;
  /** Saves now if anything is pending. */
  flush(): void;
  stop(): void;
}

export function createWorkspaceSaver(
  ws: Workspace,
  file: string,
  opts: { debounceMs?: number; onError?: (err: unknown) => void } = {},
): WorkspaceSaver {
  return debouncedSave(() => saveWorkspaceFile(ws, file), {
    debounceMs: opts.debounceMs ?? 500,
    ...(opts.onError ? { onError: opts.onError } : {}),
  });
}
