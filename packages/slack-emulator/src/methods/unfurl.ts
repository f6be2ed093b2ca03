import { validateBlocks } from "../blockkit.ts";
import { argumentError, SlackApiError } from "../errors.ts";
import {
  ENTITY_TRIGGER_TTL_MS,
  ERROR_STATUSES,
  entityProblems,
  storeWorkObjects,
  workObjectsState,
} from "../work-objects.ts";
import type { Json } from "../workspace.ts";
import { fileState, type SharedLinks } from "./files.ts";
import { actor, type CallContext, type MethodSpec } from "./types.ts";

/**
 * chat.unfurl and the Work Object flexpane, as Slack's reference has them:
 *
 * - chat.unfurl (links:write, tier 3): channel + ts, or unfurl_id + source; `unfurls` a JSON
 *   object of URL → attachment, and/or `metadata` {entities: [...]} (Work Objects); only URLs
 *   Slack sent in link_shared for that message (cannot_unfurl_url otherwise; an entity's
 *   app_unfurl_url is its URL). An unfurl's `blocks` are checked as a message's are
 *   (invalid_blocks, which Slack answers though its reference page does not list it). Metadata
 *   that is not {entities: [an entity, …]} is invalid_metadata_format; an entity Slack will not
 *   take (a required field missing, an unknown type), and every entity while the app's Work
 *   Objects are off (work-objects.ts), is dropped with `ok` and the warning
 *   invalid_metadata_format, naming the problems in response_metadata.messages, or refused
 *   outright when the setting says Slack refuses them.
 * - entity.presentDetails (no scope, tier 3): `trigger_id` of an entity_details_requested, once,
 *   within its deadline (invalid_trigger_id); `metadata` one entity whose external_ref.id is the
 *   trigger's (entity_metadata_does_not_match_trigger), or `error` {status, …} with a status
 *   Slack lists; neither, or either malformed, is invalid_metadata; user_auth_required without
 *   user_auth_url is user_auth_url_missing; Work Objects off: feature_not_enabled.
 */

/** A JSON pointer's reference token for a key (RFC 6901: ~ then /). */
function pointerKey(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

function sharedLinks(ctx: CallContext): SharedLinks {
  const { links } = fileState(ctx.ws);
  const unfurlId = ctx.args.str("unfurl_id");
  if (unfurlId !== undefined) {
    const source = ctx.args.str("source");
    if (source !== "composer" && source !== "conversations_history") {
      throw new SlackApiError("invalid_source");
    }
    const rec = links.get(unfurlId);
    if (!rec) throw new SlackApiError("invalid_unfurl_id");
    return rec;
  }
  const channel = ctx.args.str("channel");
  if (channel === undefined) throw new SlackApiError("missing_channel");
  const ts = ctx.args.str("ts");
  if (ts === undefined) throw new SlackApiError("missing_ts");
  const ch = ctx.ws.resolveChannel(channel);
  const rec = ch ? links.get(`${ch.id}:${ts}`) : undefined;
  if (!rec) throw new SlackApiError("cannot_find_message");
  return rec;
}

function checkedUnfurls(ctx: CallContext, rec: SharedLinks): Record<string, unknown> | undefined {
  if (!ctx.args.given("unfurls")) return undefined;
  const unfurls = ctx.args.json("unfurls", "invalid_unfurls_format");
  if (typeof unfurls !== "object" || unfurls === null || Array.isArray(unfurls)) {
    throw new SlackApiError("invalid_unfurls_format");
  }
  for (const [url, value] of Object.entries(unfurls)) {
    if (!rec.urls.includes(url)) throw new SlackApiError("cannot_unfurl_url");
    if (typeof value !== "object" || value === null) {
      throw new SlackApiError("invalid_unfurls_format");
    }
    const { blocks } = value as { blocks?: unknown };
    if (blocks !== undefined) {
      const r = validateBlocks(blocks, { pointer: `/unfurls/${pointerKey(url)}/blocks` });
      if (!r.ok) throw argumentError("invalid_blocks", r.messages);
    }
  }
  return unfurls as Record<string, unknown>;
}

/** The entities Slack keeps, by URL, and the lines saying why any were dropped. */
function checkedEntities(
  ctx: CallContext,
  rec: SharedLinks,
): { kept: Record<string, Json>; dropped: string[] } | undefined {
  if (!ctx.args.given("metadata")) return undefined;
  const m = ctx.args.json("metadata", "invalid_metadata_format");
  const entities = (m as { entities?: unknown } | undefined)?.entities;
  if (typeof m !== "object" || m === null || !Array.isArray(entities) || entities.length === 0) {
    throw new SlackApiError("invalid_metadata_format");
  }
  for (const e of entities) {
    const url = (e as { app_unfurl_url?: unknown } | null)?.app_unfurl_url;
    if (typeof url === "string" && !rec.urls.includes(url)) {
      throw new SlackApiError("cannot_unfurl_url");
    }
  }
  const { setting } = workObjectsState(ctx.ws);
  if (!setting.enabled) {
    if (setting.refusal === "error") throw new SlackApiError("invalid_metadata_format");
    return { kept: {}, dropped: ["[WARN] Work Objects are not enabled for this app"] };
  }
  const kept: Record<string, Json> = {};
  const dropped: string[] = [];
  entities.forEach((e, i) => {
    const problems = entityProblems(e, `/metadata/entities/${i}`, true);
    if (problems.length > 0) dropped.push(...problems);
    else kept[(e as { app_unfurl_url: string }).app_unfurl_url] = structuredClone(e as Json);
  });
  return { kept, dropped };
}

export const UNFURL: Readonly<Record<string, MethodSpec>> = {
  "chat.unfurl": {
    auth: true,
    errors: [
      "missing_channel",
      "missing_ts",
      "cannot_find_message",
      "invalid_unfurl_id",
      "invalid_unfurls_format",
      "invalid_metadata_format",
      "cannot_unfurl_url",
      "invalid_source",
      "invalid_blocks",
    ],
    handler: (ctx) => {
      actor(ctx);
      const rec = sharedLinks(ctx);
      const unfurls = checkedUnfurls(ctx, rec);
      const entities = checkedEntities(ctx, rec);
      if (unfurls) {
        rec.unfurls = { ...rec.unfurls, ...unfurls };
        const ch = ctx.ws.resolveChannel(rec.channel);
        const msg = ch ? ctx.ws.findMessage(ch, rec.ts) : undefined;
        if (msg) msg.unfurls = structuredClone(rec.unfurls);
      }
      if (!entities) return {};
      storeWorkObjects(ctx.ws, rec.channel, rec.ts, entities.kept);
      if (entities.dropped.length === 0) return {};
      ctx.warn("invalid_metadata_format");
      return {
        warning: "invalid_metadata_format",
        response_metadata: { warnings: ["invalid_metadata_format"], messages: entities.dropped },
      };
    },
  },

  "entity.presentDetails": {
    auth: true,
    errors: [
      "invalid_trigger_id",
      "invalid_metadata",
      "entity_metadata_does_not_match_trigger",
      "user_auth_url_missing",
      "feature_not_enabled",
    ],
    handler: (ctx) => {
      const t = actor(ctx);
      const s = workObjectsState(ctx.ws);
      if (!s.setting.enabled) throw new SlackApiError("feature_not_enabled");
      const triggerId = ctx.args.str("trigger_id") ?? "";
      const trigger = s.triggers.get(triggerId);
      if (!trigger || trigger.used || ctx.ws.now() - trigger.issuedAt > ENTITY_TRIGGER_TTL_MS) {
        throw new SlackApiError("invalid_trigger_id");
      }
      if (t.kind === "user" && t.userId !== trigger.user) {
        throw new SlackApiError("invalid_trigger_id");
      }
      const metadata = ctx.args.json("metadata", "invalid_metadata");
      const error = ctx.args.json("error", "invalid_metadata");
      if (metadata === undefined && error === undefined) {
        throw argumentError("invalid_metadata", ["[ERROR] must provide one of metadata or error"]);
      }
      if (metadata !== undefined) {
        const problems = entityProblems(metadata, "/metadata", false);
        if (problems.length > 0) throw argumentError("invalid_metadata", problems);
        const ref = (metadata as { external_ref: { id: string } }).external_ref;
        if (ref.id !== trigger.externalRef.id) {
          throw new SlackApiError("entity_metadata_does_not_match_trigger");
        }
      }
      if (error !== undefined) {
        const status = (error as { status?: unknown } | null)?.status;
        if (typeof status !== "string" || !ERROR_STATUSES.has(status)) {
          throw argumentError("invalid_metadata", [
            `[ERROR] must be one of ${[...ERROR_STATUSES].join(", ")} [json-pointer:/error/status]`,
          ]);
        }
      }
      const userAuthRequired = ctx.args.bool("user_auth_required") === true;
      if (userAuthRequired && ctx.args.str("user_auth_url") === undefined) {
        throw new SlackApiError("user_auth_url_missing");
      }
      trigger.used = true;
      s.flexpanes.push({
        user: trigger.user,
        triggerId,
        channel: trigger.channel,
        messageTs: trigger.messageTs,
        ...(metadata !== undefined && { metadata: structuredClone(metadata as Json) }),
        ...(error !== undefined && { error: structuredClone(error as Json) }),
        userAuthRequired,
      });
      return {};
    },
  },
};
