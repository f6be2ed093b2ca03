import type { NoiseLevel } from "../../store/index.ts";
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
    text: "Every join and leave",
    description: "One thread message each (busy events get loud)",
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
