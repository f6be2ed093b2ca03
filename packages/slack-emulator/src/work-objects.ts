import { randomHex } from "./ids.ts";
import type { Json, Workspace } from "./workspace.ts";

/**
 * Work Objects (docs.slack.dev "Implementing Work Objects"; slack-reference/blocks-and-objects.md):
 * what an app unfurled as an entity (chat.unfurl `metadata.entities`), the flexpane triggers
 * Slack issued with entity_details_requested, and the flexpanes the app presented
 * (entity.presentDetails). Kept beside the workspace, not in it: a message's `unfurls` stay the
 * classic unfurls.
 *
 * Whether the app has Work Objects is an app setting (Work Object Previews, no manifest key), off
 * until someone turns it on: `setWorkObjects(ws, { enabled: true })`. Off, chat.unfurl refuses
 * `metadata` the way `refusal` says: an error (`invalid_metadata_format`), or `ok` with that
 * warning and the entities dropped (the answer a third-party report saw for metadata Slack would
 * not take; Slack's docs say nothing of either).
 */

export interface WorkObjectsSetting {
  enabled: boolean;
  refusal: "error" | "warning";
}

export const ENTITY_TYPES: ReadonlySet<string> = new Set([
  "slack#/entities/task",
  "slack#/entities/file",
  "slack#/entities/item",
  "slack#/entities/incident",
  "slack#/entities/content_item",
]);

const CUSTOM_FIELD_TYPES = new Set([
  "integer",
  "string",
  "array",
  "boolean",
  "slack#/types/date",
  "slack#/types/timestamp",
  "slack#/types/image",
  "slack#/types/channel_id",
  "slack#/types/user",
  "slack#/types/entity_ref",
  "slack#/types/link",
  "slack#/types/email",
]);

export const ERROR_STATUSES: ReadonlySet<string> = new Set([
  "restricted",
  "internal_error",
  "not_found",
  "custom",
  "custom_partial_view",
  "timeout",
  "edit_error",
]);

/** As long as a modal's trigger (views.ts): the event's ack deadline. */
export const ENTITY_TRIGGER_TTL_MS = 3_000;

export interface EntityTrigger {
  readonly user: string;
  readonly externalRef: { id: string; type?: string };
  readonly url: string;
  readonly channel: string;
  readonly messageTs: string;
  readonly issuedAt: number;
  used: boolean;
}

export interface PresentedFlexpane {
  readonly user: string;
  readonly triggerId: string;
  readonly channel: string;
  readonly messageTs: string;
  readonly metadata?: Json;
  readonly error?: Json;
  readonly userAuthRequired: boolean;
}

interface State {
  setting: WorkObjectsSetting;
  /** channel:ts → URL → entity */
  readonly entities: Map<string, Record<string, Json>>;
  readonly triggers: Map<string, EntityTrigger>;
  readonly flexpanes: PresentedFlexpane[];
}

const states = new WeakMap<Workspace, State>();

export function workObjectsState(ws: Workspace): State {
  let s = states.get(ws);
  if (!s) {
    s = {
      setting: { enabled: false, refusal: "warning" },
      entities: new Map(),
      triggers: new Map(),
      flexpanes: [],
    };
    states.set(ws, s);
  }
  return s;
}

/** Turns the app's Work Object Previews on or off (and how Slack refuses them while off). */
export function setWorkObjects(ws: Workspace, setting: Partial<WorkObjectsSetting>): void {
  const s = workObjectsState(ws);
  s.setting = { ...s.setting, ...setting };
}

/** The Work Objects a message was unfurled with, by the URL as posted. */
export function workObjectsOf(ws: Workspace, channel: string, ts: string): Record<string, Json> {
  const ch = ws.resolveChannel(channel);
  return { ...(workObjectsState(ws).entities.get(`${ch?.id ?? channel}:${ts}`) ?? {}) };
}

export function storeWorkObjects(
  ws: Workspace,
  channel: string,
  ts: string,
  byUrl: Record<string, Json>,
): void {
  const s = workObjectsState(ws);
  const key = `${channel}:${ts}`;
  s.entities.set(key, { ...(s.entities.get(key) ?? {}), ...byUrl });
}

/** Every flexpane presented to `user`, oldest first. */
export function flexpanesFor(ws: Workspace, user: string): PresentedFlexpane[] {
  return workObjectsState(ws).flexpanes.filter((f) => f.user === user);
}

export function issueEntityTrigger(
  ws: Workspace,
  t: Omit<EntityTrigger, "issuedAt" | "used">,
  now: number,
): string {
  const id = `${Math.floor(now / 1000)}.${randomHex(6)}.${randomHex(16)}`;
  workObjectsState(ws).triggers.set(id, { ...t, issuedAt: now, used: false });
  return id;
}

const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * An entity's problems, one line each in Slack's `[ERROR] … [json-pointer:…]` form: the fields
 * node-slack-sdk's EntityMetadata requires (entity_type, url, external_ref.id,
 * entity_payload.attributes.title.text; app_unfurl_url for chat.unfurl), custom fields' and
 * action buttons' required keys and enumerations. Unknown keys pass, as in blockkit.ts.
 */
export function entityProblems(e: unknown, pointer: string, forUnfurl: boolean): string[] {
  const out: string[] = [];
  const err = (p: string, problem: string) => out.push(`[ERROR] ${problem} [json-pointer:${p}]`);
  const str = (p: string, v: unknown) => {
    if (typeof v !== "string" || v === "") err(p, "missing required field");
  };
  if (!isObj(e)) {
    err(pointer, "expected an object");
    return out;
  }
  if (typeof e.entity_type !== "string" || !ENTITY_TYPES.has(e.entity_type)) {
    err(`${pointer}/entity_type`, `must be one of ${[...ENTITY_TYPES].join(", ")}`);
  }
  str(`${pointer}/url`, e.url);
  if (forUnfurl) str(`${pointer}/app_unfurl_url`, e.app_unfurl_url);
  if (!isObj(e.external_ref)) err(`${pointer}/external_ref`, "missing required field");
  else str(`${pointer}/external_ref/id`, e.external_ref.id);
  const payload = e.entity_payload;
  const pp = `${pointer}/entity_payload`;
  if (!isObj(payload)) {
    err(pp, "missing required field");
    return out;
  }
  const attrs = payload.attributes;
  if (!isObj(attrs)) err(`${pp}/attributes`, "missing required field");
  else if (!isObj(attrs.title)) err(`${pp}/attributes/title`, "missing required field");
  else str(`${pp}/attributes/title/text`, attrs.title.text);
  if (payload.custom_fields !== undefined) {
    if (!Array.isArray(payload.custom_fields)) err(`${pp}/custom_fields`, "expected an array");
    else {
      payload.custom_fields.forEach((f, i) => {
        const fp = `${pp}/custom_fields/${i}`;
        if (!isObj(f)) {
          err(fp, "expected an object");
          return;
        }
        str(`${fp}/label`, f.label);
        str(`${fp}/key`, f.key);
        if (typeof f.type !== "string" || !CUSTOM_FIELD_TYPES.has(f.type)) {
          err(`${fp}/type`, `must be one of ${[...CUSTOM_FIELD_TYPES].join(", ")}`);
        }
        if (f.type === "slack#/types/user" && !isObj(f.user))
          err(`${fp}/user`, "missing required field");
      });
    }
  }
  if (payload.display_order !== undefined) {
    const keys = new Set(
      Array.isArray(payload.custom_fields)
        ? payload.custom_fields.map((f) => (isObj(f) ? f.key : undefined))
        : [],
    );
    if (!Array.isArray(payload.display_order)) err(`${pp}/display_order`, "expected an array");
    else
      payload.display_order.forEach((k, i) => {
        if (typeof k !== "string") err(`${pp}/display_order/${i}`, "expected a string");
        else if (!keys.has(k) && !(isObj(payload.fields) && k in payload.fields)) {
          err(`${pp}/display_order/${i}`, `no field ${k}`);
        }
      });
  }
  if (payload.actions !== undefined) {
    if (!isObj(payload.actions)) err(`${pp}/actions`, "expected an object");
    else {
      for (const group of ["primary_actions", "overflow_actions"] as const) {
        const list = payload.actions[group];
        if (list === undefined) continue;
        const gp = `${pp}/actions/${group}`;
        if (!Array.isArray(list)) {
          err(gp, "expected an array");
          continue;
        }
        list.forEach((b, i) => {
          const bp = `${gp}/${i}`;
          if (!isObj(b)) {
            err(bp, "expected an object");
            return;
          }
          str(`${bp}/text`, b.text);
          str(`${bp}/action_id`, b.action_id);
          if (typeof b.action_id === "string" && b.action_id.length > 255) {
            err(`${bp}/action_id`, "must be less than 256 characters");
          }
          if (b.style !== undefined && b.style !== "primary" && b.style !== "danger") {
            err(`${bp}/style`, "must be one of primary, danger");
          }
        });
      }
    }
  }
  return out;
}
