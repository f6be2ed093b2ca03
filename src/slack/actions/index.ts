import type { App } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import * as cancelYes from "./cancel-yes.ts";
import * as cardAttendance from "./card-attendance.ts";
import * as cardCancel from "./card-cancel.ts";
import * as cardEdit from "./card-edit.ts";
import * as cardNotify from "./card-notify.ts";
import * as formPreview from "./form-preview.ts";
import * as homeSchedule from "./home-schedule.ts";
import * as homeSettings from "./home-settings.ts";
import * as homeToken from "./home-token.ts";
import * as listOverflow from "./list-overflow.ts";
import * as settingsCheck from "./settings-check.ts";

/** Block actions: buttons and menus on cards, lists, App Home and in modals. */
export function registerActions(app: App, kit: ListenerKit): void {
  for (const listener of [
    cardEdit,
    cardCancel,
    cancelYes,
    cardNotify,
    cardAttendance,
    listOverflow,
    homeSchedule,
    homeToken,
    homeSettings,
    formPreview,
    settingsCheck,
  ]) {
    listener.register(app, kit);
  }
}
