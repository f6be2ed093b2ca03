/**
 * What the playground page may send its API: each body as a strict zod schema, read with a
 * size limit; a bad one is a BadRequest (400, or 413 when too large) with the reason.
 */
import type { IncomingMessage } from "node:http";
import { z } from "zod";

const BODY_LIMIT = 64 * 1024;

export class BadRequest extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > BODY_LIMIT) throw new BadRequest(`the body is over ${BODY_LIMIT} bytes`, 413);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BadRequest("the body is not valid JSON");
  }
}

export function parse<T extends z.ZodType>(schema: T, input: unknown): z.output<T> {
  const r = schema.safeParse(input);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    throw new BadRequest(`${where}${issue?.message ?? "invalid input"}`);
  }
  return r.data;
}

const id = z.string().regex(/^[A-Z0-9]{2,20}$/, "must be a Slack id");
const ts = z.string().regex(/^\d{1,12}\.\d{1,6}$/, "must be a Slack ts");
const stateEntry = z.record(z.string(), z.record(z.string(), z.looseObject({ type: z.string() })));

export const CommandBody = z.strictObject({
  user: id,
  channel: id,
  text: z.string().max(4000),
});
export const MessageBody = z.strictObject({
  user: id,
  channel: id,
  text: z.string().min(1).max(4000),
  thread_ts: ts.optional(),
});
export const ActionBody = z.strictObject({
  user: id,
  action_id: z.string().min(1).max(255),
  block_id: z.string().min(1).max(255).optional(),
  channel: id.optional(),
  message_ts: ts.optional(),
  ephemeral: z.boolean().optional(),
  view_id: id.optional(),
  /** The element's new state ({type, value|selected_*}), or a button's value. */
  state: z.looseObject({ type: z.string() }).optional(),
  /** The whole modal's current inputs, so the payload's view.state is what the user sees. */
  values: stateEntry.optional(),
});
export const SubmitBody = z.strictObject({ user: id, view_id: id, values: stateEntry });
export const CloseBody = z.strictObject({ user: id, view_id: id });
export const HomeBody = z.strictObject({ user: id });
export const WorkspaceBody = z.strictObject({ user: id, team: id });
export const StateControl = z.strictObject({
  eventId: z.string().min(1).max(200),
  state: z.enum(["NOT_STARTED", "PREP_EVENT", "IN_EVENT"]),
  newInstance: z.boolean().optional(),
});
export const AttendeesControl = z
  .strictObject({
    eventId: z.string().min(1).max(200),
    /** The workspace whose event it is (an org has two); default the playground's own. */
    team: id.optional(),
    join: z.array(z.string().min(1).max(100)).max(100).optional(),
    /** The event's panelists or moderators join, by their e-mails (the card's "Panelists in"). */
    role: z.enum(["panelist", "moderator"]).optional(),
    count: z.number().int().min(0).max(20_000).optional(),
    leave: z.number().int().min(0).max(20_000).optional(),
  })
  .refine((b) => (b.join?.length ?? 0) + (b.count ?? 0) + (b.leave ?? 0) > 0 || b.role, {
    message: "say who joins or how many leave",
  });
export const ShortcutBody = z.strictObject({ user: id, callback_id: z.string().min(1).max(255) });
export const FaultControl = z.strictObject({
  service: z.enum(["relay", "events"]),
  error: z.string().min(1).max(100).optional(),
  status: z.number().int().min(400).max(599).optional(),
  delayMs: z.number().int().min(0).max(30_000).optional(),
  times: z.number().int().min(1).max(100).optional(),
});
/** The app's Work Object Previews setting (off on a new app). */
export const WorkObjectsBody = z.strictObject({ enabled: z.boolean() });
/** A person opens the Work Object a message was unfurled with (its URL as posted). */
export const OpenWorkObjectBody = z.strictObject({
  user: id,
  channel: id,
  message_ts: ts,
  url: z.string().min(1).max(3000),
});
/** A button of the flexpane last presented to the person. */
export const FlexpaneActionBody = z.strictObject({
  user: id,
  action_id: z.string().min(1).max(255),
});
