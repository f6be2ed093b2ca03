import { parseNoise, unknownNoiseText } from "../../blocks/noise.ts";
import { USER_ERROR_CODES, UserFacingError } from "../../domain/errors.ts";
import { userText } from "../../domain/text.ts";
import type { NoiseLevel } from "../../store/index.ts";
import { channelOf, unescapeEntities, words } from "./text.ts";

export interface NotifyArgs {
  /** The event, as typed (entities read back). */
  query: string;
  channel: string | undefined;
  noise: NoiseLevel | undefined;
}

/**
 * `<event words…> [#channel] [noise]`, channel and noise in any order after the event. A word
 * after the channel that is no noise level is refused, naming the ones there are.
 */
export function parseNotifyArgs(text: string): NotifyArgs {
  let channel: string | undefined;
  let noise: NoiseLevel | undefined;
  const rest: string[] = [];
  for (const w of words(text)) {
    const ch = channelOf(w);
    if (ch && !channel) channel = ch;
    else if (rest.length > 0 && !noise && parseNoise(w)) noise = parseNoise(w);
    else if (channel && rest.length > 0) {
      // After the channel only a noise level may come: anything else is a mistyped one, never
      // more of the event's name.
      throw new UserFacingError(
        USER_ERROR_CODES.invalid,
        unknownNoiseText(userText(unescapeEntities(w), 40)),
      );
    } else if (w.startsWith("#") && w.length > 1) {
      throw new UserFacingError(
        USER_ERROR_CODES.invalid,
        `I couldn't read the channel ${userText(unescapeEntities(w), 40)}. Pick it from Slack's suggestions as you type # so it becomes a link.`,
      );
    } else rest.push(w);
  }
  return { query: unescapeEntities(rest.join(" ")), channel, noise };
}
