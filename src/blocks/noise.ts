import type { NoiseLevel } from "../store/index.ts";
import { type KnownBlock, plain } from "./kit.ts";

/** How much attendee activity a channel's thread carries (the live area's noise levels). */
export const NOISE_CHOICES: ReadonlyArray<{
  value: NoiseLevel;
  text: string;
  description: string;
}> = [
  { value: "off", text: "Card only", description: "No attendee notices in the thread" },
  { value: "counter", text: "Running count", description: "One thread message, updated in place" },
  {
    value: "digest",
    text: "Digests",
    description: "Who joined and left, grouped every little while",
  },
  {
    value: "every",
    text: "Joins and leaves as they happen",
    description: "Posted within seconds; a burst is listed in one message",
  },
];
export const DEFAULT_NOISE_CHOICE: NoiseLevel = "digest";

/** The noise level picker, shared by the schedule form and the notify dialog. */
export function noiseInput(id: string): KnownBlock {
  const options = NOISE_CHOICES.map((n) => ({
    text: plain(n.text, 75),
    value: n.value,
    description: plain(n.description, 75),
  }));
  return {
    type: "input",
    block_id: id,
    optional: true,
    label: plain("Attendee activity in the channel's thread", 2000),
    element: {
      type: "radio_buttons",
      action_id: id,
      options,
      initial_option: options.find((o) => o.value === DEFAULT_NOISE_CHOICE) ?? options[0],
    },
  } as KnownBlock;
}

/** What a noise level means, in words (the card says it; notify's answer too). */
export const NOISE_WORDS: Readonly<Record<NoiseLevel, string>> = {
  off: "off",
  counter: "a running count in the thread",
  digest: "digests in the thread",
  every: "joins and leaves in the thread as they happen",
};

export function parseNoise(word: string | undefined): NoiseLevel | undefined {
  const w = (word ?? "").toLowerCase();
  if (w === "off" || w === "counter" || w === "digest" || w === "every") return w;
  if (w === "count" || w === "counters") return "counter";
  if (w === "digests") return "digest";
  if (w === "all") return "every";
  return undefined;
}

/** The words `/onair notify` takes for a noise level, as help lists them. */
export const NOISE_KEYWORDS: readonly NoiseLevel[] = ["off", "counter", "digest", "every"];

/** A word typed where a noise level goes that is none: which words are, and what each does. */
export function unknownNoiseText(word: string): string {
  return `“${word}” isn't a noise level. Use one of: ${NOISE_KEYWORDS.map((n) => `\`${n}\` (${NOISE_WORDS[n]})`).join(", ")}.`;
}
