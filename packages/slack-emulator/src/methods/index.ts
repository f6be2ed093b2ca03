import { CALLS } from "./calls.ts";
import { CHAT } from "./chat.ts";
import { CONVERSATIONS } from "./conversations.ts";
import { FILES } from "./files.ts";
import { FUNCTIONS } from "./functions.ts";
import { PEOPLE } from "./people.ts";
import type { MethodSpec } from "./types.ts";
import { UNFURL } from "./unfurl.ts";
import { VIEWS } from "./views.ts";

export { Args } from "./args.ts";
export type { CallContext, MethodSpec } from "./types.ts";

/**
 * Every Web API method the emulator answers. To add one (files.getUploadURLExternal,
 * chat.unfurl, …): make sure Slack's reference fixture has it (reference/web-api-methods.json),
 * write its spec in the file of its family, list it here. Scopes, required and accepted
 * arguments, argument groups and the rate tier then come from the reference by themselves.
 */
export const METHODS: Readonly<Record<string, MethodSpec>> = {
  ...PEOPLE,
  ...CHAT,
  ...VIEWS,
  ...CONVERSATIONS,
  ...FILES,
  ...UNFURL,
  ...FUNCTIONS,
  ...CALLS,
};
