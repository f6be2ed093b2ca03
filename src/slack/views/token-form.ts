import type { AllMiddlewareArgs, App, SlackViewMiddlewareArgs } from "@slack/bolt";
import type { WebClient } from "@slack/web-api";
import { buildNoticeModal } from "../../blocks/event-form.ts";
import {
  buildTokenForm,
  buildTokenMinted,
  buildTokenMintedModal,
  readTokenForm,
  tokenErrorsToBlocks,
} from "../../blocks/tokens.ts";
import type { ViewStateValues } from "../../blocks/view-state.ts";
import { effectiveSettings } from "../../domain/access.ts";
import type { Actor } from "../../domain/directory.ts";
import { plainMessage } from "../../domain/errors.ts";
import { allowedDurations, checkTokenDraft, mintToken, startMinting } from "../../domain/tokens.ts";
import { TOKEN_FIELDS, VIEWS } from "../../ids.ts";
import { RELAY_ROLES } from "../../upstream/relay/schemas.ts";
import { reportFailure } from "../failure.ts";
import { publishHome } from "../home.ts";
import { actorOf, type ListenerKit } from "../kit.ts";
import { openThenFill } from "../modal.ts";
import { quietClient } from "../reply.ts";
import { claimSubmission, unavailableText } from "./once.ts";

/** The answer to a token form that reached the app a second time. */
export const REPEATED_MINT_TEXT =
  "This form reached On Air twice; it was acted on once, so at most one token was minted. It is shown only in the window under this one (or in your DM with On Air, if that window was closed). Close this one to get back to it.";

/** The token form: opened by `/onair token` and App Home. */
export async function openTokenForm(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  triggerId: string,
): Promise<void> {
  await openThenFill(kit.deps, client, triggerId, "Mint a relay token", async () => {
    const settings = await startMinting(kit.deps, actor);
    return buildTokenForm({
      privateMetadata: "",
      allowed: allowedDurations(settings.longestTokenMs),
      longestMs: settings.longestTokenMs,
    });
  });
}

/**
 * Shows the token where only the requester can see it and nothing can lose it: in the form's own
 * modal (the submission turned it into "Minting…"). Closed meanwhile, the app's DM with them
 * holds it instead. Never a channel message: Slack refuses ephemeral posts where the app is not
 * a member, and a token minted upstream cannot be revoked through the API.
 */
async function showToken(
  kit: ListenerKit,
  client: WebClient,
  actor: Actor,
  viewId: string,
  token: Parameters<typeof buildTokenMinted>[0],
): Promise<void> {
  const quiet = quietClient(kit.deps, client);
  try {
    await quiet.views.update({ view_id: viewId, view: buildTokenMintedModal(token) });
    return;
  } catch (err) {
    kit.deps.logger.info({ reason: (err as Error).message }, "token modal gone; sending it by DM");
  }
  const msg = buildTokenMinted(token);
  await quiet.chat.postMessage({ channel: actor.user, text: msg.text, blocks: msg.blocks });
}

export function register(app: App, kit: ListenerKit): void {
  const { deps } = kit;
  app.view(
    VIEWS.token,
    async ({ ack, body, view, client, context }: SlackViewMiddlewareArgs & AllMiddlewareArgs) => {
      const actor = actorOf(kit, context, body.user.id, client, body.team?.id);
      const draft = readTokenForm((view.state?.values ?? {}) as ViewStateValues);
      let settings: Awaited<ReturnType<typeof effectiveSettings>>;
      try {
        settings = await effectiveSettings(deps, actor.team);
      } catch (err) {
        deps.logger.error({ err }, "token form: settings not readable");
        await ack({
          response_action: "errors",
          errors: { [TOKEN_FIELDS.roles]: plainMessage(err) },
        });
        return;
      }
      const checked = checkTokenDraft(draft, settings, RELAY_ROLES);
      if ("errors" in checked) {
        await ack({ response_action: "errors", errors: tokenErrorsToBlocks(checked.errors) });
        return;
      }
      const claim = await claimSubmission(deps, actor.team, view);
      if (claim === "unavailable") {
        await ack({
          response_action: "errors",
          errors: { [TOKEN_FIELDS.roles]: unavailableText("Mint token") },
        });
        return;
      }
      if (claim === "repeat") {
        // On top, never in place: the window under it holds the one token (or says how it went)
        // and must not be replaced; nothing here shows or mints a token.
        await ack({
          response_action: "push",
          view: buildNoticeModal("Mint a relay token", REPEATED_MINT_TEXT),
        });
        return;
      }
      await ack({
        response_action: "update",
        view: buildNoticeModal(
          "Mint a relay token",
          ":hourglass_flowing_sand: Minting your token…",
        ),
      });
      try {
        const token = await mintToken(deps, actor, draft, RELAY_ROLES);
        await showToken(kit, client, actor, view.id, token);
        await publishHome(deps, client, actor);
      } catch (err) {
        await reportFailure(deps, "mint", err, async (text) => {
          try {
            await client.views.update({
              view_id: view.id,
              view: buildNoticeModal("Mint a relay token", text),
            });
          } catch {
            await client.chat.postMessage({ channel: actor.user, text });
          }
        });
      }
    },
  );
}
