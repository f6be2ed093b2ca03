import type { BlockAction } from "@slack/bolt";

/** Where a block action came from: the channel of a message, or none (App Home, a modal). */
export function sourceChannel(body: BlockAction): string | undefined {
  return body.channel?.id ?? body.container?.channel_id;
}

/** The pressed element's value (a button's value, an overflow's chosen option). */
export function actionValue(body: BlockAction): string {
  const a = body.actions?.[0];
  if (!a) return "";
  if (a.type === "button") return a.value ?? "";
  if (a.type === "overflow") return a.selected_option?.value ?? "";
  return "";
}
