import { argumentError, SlackApiError } from "../errors.ts";
import { randomHex } from "../ids.ts";
import type { Json, Workspace } from "../workspace.ts";
import { actor, type CallContext, type MethodSpec } from "./types.ts";

/**
 * The Calls API as Slack's reference has it (slack-reference/web-api-methods.json,
 * blocks-and-objects.md "Calls API"): calls.add (calls:write, tier 3) takes `external_unique_id`
 * and `join_url`, and `created_by` is required with a bot token (optional with a user token,
 * where it defaults to the token's user); calls.update / calls.end / calls.participants.add /
 * remove (calls:write) and calls.info (calls:read) name the call by `id`. `users` is an array of
 * `{slack_id}` or `{external_id, display_name, avatar_url?}`.
 *
 * Where the reference is silent the emulator picks the strict reading and says so here: a
 * missing or unknown `created_by` is invalid_created_by; an unknown id is invalid_call_id (for
 * calls.info, which documents no such error, invalid_arguments); a call already ended refuses
 * calls.end and participant changes with inactive_call; a `users` value that is not such an
 * array is bad_users, an empty one missing_argument. Slack asks `external_unique_id` to be unique
 * across a provider's calls but documents no error for a repeat: a repeat is answered like any
 * add, and `callsOf` shows every call so a test can count them.
 */

export interface CallUser {
  slack_id?: string;
  external_id?: string;
  display_name?: string;
  avatar_url?: string;
}

export interface EmulatedCall {
  id: string;
  external_unique_id: string;
  join_url: string;
  title?: string;
  desktop_app_join_url?: string;
  external_display_id?: string;
  date_start: number;
  created_by: string;
  users: CallUser[];
  /** Seconds since the epoch when calls.end ended it; undefined while active. */
  date_end?: number;
  duration?: number;
}

const states = new WeakMap<Workspace, Map<string, EmulatedCall>>();

function callState(ws: Workspace): Map<string, EmulatedCall> {
  let s = states.get(ws);
  if (!s) {
    s = new Map();
    states.set(ws, s);
  }
  return s;
}

/** Every call the app added, in the order added (what Slack would show, for tests and the playground). */
export function callsOf(ws: Workspace): EmulatedCall[] {
  return [...callState(ws).values()].map((c) => structuredClone(c));
}

function userKey(u: CallUser): string {
  return u.slack_id !== undefined ? `s:${u.slack_id}` : `e:${u.external_id ?? ""}`;
}

function checkedUsers(ctx: CallContext, required: boolean): CallUser[] {
  const raw = ctx.args.json("users", "bad_users");
  if (raw === undefined) {
    if (required) throw new SlackApiError("missing_argument");
    return [];
  }
  if (!Array.isArray(raw)) throw new SlackApiError("bad_users");
  if (required && raw.length === 0) throw new SlackApiError("missing_argument");
  const out: CallUser[] = [];
  for (const u of raw) {
    if (typeof u !== "object" || u === null || Array.isArray(u))
      throw new SlackApiError("bad_users");
    const { slack_id, external_id, display_name, avatar_url } = u as Record<string, unknown>;
    if (typeof slack_id === "string" && slack_id !== "") {
      const found = ctx.ws.user(slack_id);
      if (!found || found.deleted) throw new SlackApiError("user_not_found");
      out.push({ slack_id });
    } else if (
      typeof external_id === "string" &&
      external_id !== "" &&
      typeof display_name === "string" &&
      display_name !== ""
    ) {
      out.push({
        external_id,
        display_name,
        ...(typeof avatar_url === "string" && { avatar_url }),
      });
    } else {
      throw new SlackApiError("bad_users");
    }
  }
  return out;
}

function callById(ctx: CallContext, unknown = "invalid_call_id"): EmulatedCall {
  const id = ctx.args.str("id");
  const call = id === undefined ? undefined : callState(ctx.ws).get(id);
  if (call) return call;
  if (unknown === "invalid_arguments") {
    throw argumentError(unknown, ["[ERROR] id does not name a call of this workspace"]);
  }
  throw new SlackApiError(unknown);
}

function callJson(c: EmulatedCall): Json {
  return structuredClone(c) as unknown as Json;
}

export const CALLS: Readonly<Record<string, MethodSpec>> = {
  "calls.add": {
    auth: true,
    // bad_users is not documented for calls.add: a malformed `users` there is invalid_arguments.
    errors: ["invalid_created_by", "invalid_start_time", "user_not_found"],
    handler: (ctx) => {
      const t = actor(ctx);
      const given = ctx.args.str("created_by");
      const createdBy = given ?? (t.kind === "user" ? t.userId : undefined);
      const creator = createdBy === undefined ? undefined : ctx.ws.user(createdBy);
      if (!creator || creator.deleted || creator.is_bot) {
        throw new SlackApiError("invalid_created_by");
      }
      const start = ctx.args.given("date_start") ? Number(ctx.args.raw.date_start) : undefined;
      if (start !== undefined && (!Number.isInteger(start) || start <= 0)) {
        throw new SlackApiError("invalid_start_time");
      }
      let users: CallUser[];
      try {
        users = checkedUsers(ctx, false);
      } catch (err) {
        if (err instanceof SlackApiError && err.code === "bad_users") {
          throw argumentError("invalid_arguments", ["[ERROR] users must be an array of users"]);
        }
        throw err;
      }
      const call: EmulatedCall = {
        id: `R${randomHex(5).toUpperCase()}`,
        external_unique_id: ctx.args.resolve("external_unique_id", "invalid_arguments"),
        join_url: ctx.args.resolve("join_url", "invalid_arguments"),
        date_start: start ?? ctx.ws.nowSec(),
        created_by: creator.id,
        users,
      };
      for (const key of ["title", "desktop_app_join_url", "external_display_id"] as const) {
        const v = ctx.args.str(key);
        if (v !== undefined) call[key] = v;
      }
      callState(ctx.ws).set(call.id, call);
      return { call: callJson(call) };
    },
  },

  "calls.update": {
    auth: true,
    errors: ["invalid_call_id"],
    handler: (ctx) => {
      const call = callById(ctx);
      for (const key of ["title", "join_url", "desktop_app_join_url"] as const) {
        const v = ctx.args.str(key);
        if (v !== undefined) call[key] = v;
      }
      return { call: callJson(call) };
    },
  },

  "calls.end": {
    auth: true,
    errors: ["invalid_call_id", "inactive_call"],
    handler: (ctx) => {
      const call = callById(ctx);
      if (call.date_end !== undefined) throw new SlackApiError("inactive_call");
      const now = ctx.ws.nowSec();
      const duration = ctx.args.num("duration");
      call.date_end = now;
      call.duration = duration ?? Math.max(0, now - call.date_start);
      return {};
    },
  },

  "calls.info": {
    auth: true,
    errors: ["invalid_arguments"],
    handler: (ctx) => ({ call: callJson(callById(ctx, "invalid_arguments")) }),
  },

  "calls.participants.add": {
    auth: true,
    errors: ["invalid_call_id", "inactive_call", "bad_users", "missing_argument", "user_not_found"],
    handler: (ctx) => {
      const call = callById(ctx);
      if (call.date_end !== undefined) throw new SlackApiError("inactive_call");
      const have = new Set(call.users.map(userKey));
      for (const u of checkedUsers(ctx, true)) {
        if (!have.has(userKey(u))) call.users.push(u);
        have.add(userKey(u));
      }
      return {};
    },
  },

  "calls.participants.remove": {
    auth: true,
    errors: ["invalid_call_id", "inactive_call", "bad_users", "missing_argument", "user_not_found"],
    handler: (ctx) => {
      const call = callById(ctx);
      if (call.date_end !== undefined) throw new SlackApiError("inactive_call");
      const gone = new Set(checkedUsers(ctx, true).map(userKey));
      call.users = call.users.filter((u) => !gone.has(userKey(u)));
      return {};
    },
  },
};
