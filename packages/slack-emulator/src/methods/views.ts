import { argumentError } from "../errors.ts";
import { openView, publishView, pushView, updateView } from "../views.ts";
import type { MethodSpec } from "./types.ts";

/**
 * views.*: modals on a trigger (usable once, within 3 seconds), a stack of at most three,
 * updates by view_id or external_id with the hash checked, App Home per user. The view itself
 * goes through the Block Kit validator (blockkit.ts): invalid_arguments with Slack's pointers.
 */

const TRIGGER_ERRORS = ["invalid_trigger_id", "exchanged_trigger_id", "expired_trigger_id"];

export const VIEWS: Readonly<Record<string, MethodSpec>> = {
  "views.open": {
    auth: true,
    errors: [...TRIGGER_ERRORS, "duplicate_external_id", "view_too_large"],
    handler: ({ ws, args }) => {
      const trigger = args.str("trigger_id") ?? args.str("interactivity_pointer") ?? "";
      const view = args.json("view", "invalid_arguments");
      return { view: ws.viewJson(openView(ws, trigger, view)) };
    },
  },

  "views.push": {
    auth: true,
    errors: [
      ...TRIGGER_ERRORS,
      "duplicate_external_id",
      "view_too_large",
      "not_found",
      "push_limit_reached",
    ],
    handler: ({ ws, args }) => {
      const trigger = args.str("trigger_id") ?? args.str("interactivity_pointer") ?? "";
      const view = args.json("view", "invalid_arguments");
      return { view: ws.viewJson(pushView(ws, trigger, view)) };
    },
  },

  "views.update": {
    auth: true,
    errors: ["not_found", "hash_conflict", "duplicate_external_id", "view_too_large"],
    handler: ({ ws, args }) => {
      const view = args.json("view", "invalid_arguments");
      const viewId = args.str("view_id");
      const externalId = args.str("external_id");
      const ref = {
        ...(viewId !== undefined && { view_id: viewId }),
        ...(externalId !== undefined && { external_id: externalId }),
      };
      return { view: ws.viewJson(updateView(ws, ref, view, args.str("hash"))) };
    },
  },

  "views.publish": {
    auth: true,
    errors: ["hash_conflict", "duplicate_external_id", "view_too_large"],
    handler: ({ ws, args }) => {
      const userId = args.str("user_id");
      const user = userId === undefined ? undefined : ws.user(userId);
      // No error in the reference names an unknown user here; Slack's generic answer it is.
      if (!user || user.is_bot) {
        throw argumentError("invalid_arguments", [
          "[ERROR] invalid user_id [json-pointer:/user_id]",
        ]);
      }
      const view = args.json("view", "invalid_arguments");
      return { view: ws.viewJson(publishView(ws, user.id, view, args.str("hash"))) };
    },
  },
};
