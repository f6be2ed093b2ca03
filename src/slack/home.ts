import type { WebClient } from "@slack/web-api";
import { buildHome } from "../blocks/home.ts";
import type { Deps } from "../deps.ts";
import type { Actor } from "../domain/directory.ts";
import { homeData } from "../domain/home.ts";

/** Publishes the user's App Home; failures are logged, never thrown (it is a side view). */
export async function publishHome(deps: Deps, client: WebClient, actor: Actor): Promise<void> {
  try {
    const data = await homeData(deps, actor);
    await client.views.publish({
      user_id: actor.user,
      view: buildHome({ ...data, settingsButton: true }),
    });
  } catch (err) {
    deps.logger.warn({ err }, "could not publish App Home");
  }
}
