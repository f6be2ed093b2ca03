import type { App } from "@slack/bolt";
import type { ListenerKit } from "../kit.ts";
import * as appHomeOpened from "./app-home-opened.ts";
import * as appUninstalled from "./app-uninstalled.ts";
import * as entityDetails from "./entity-details.ts";
import * as linkShared from "./link-shared.ts";
import * as tokensRevoked from "./tokens-revoked.ts";

/** Events API subscriptions (the manifest's bot events, src/ids.ts). */
export function registerEvents(app: App, kit: ListenerKit): void {
  for (const listener of [
    appHomeOpened,
    appUninstalled,
    tokensRevoked,
    linkShared,
    entityDetails,
  ]) {
    listener.register(app, kit);
  }
}
