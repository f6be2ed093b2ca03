import { escapeMrkdwn, truncate } from "../blocks/kit.ts";
import type { NoiseLevel } from "../store/index.ts";
import type { Notice } from "./state.ts";

/**
 * Attendee notices waiting for a channel's next thread message, folded: exact counts, and the
 * first few notices in arrival order for names. Small whatever the burst, so it is stored with
 * the event's live record.
 */
export interface Pending {
  joined: number;
  left: number;
  /** The first notices, in order: [kind, name, email?]. */
  sample: Array<["j" | "l", string, string?]>;
}

/** Names kept per pending digest; beyond it, "and N others". */
export const SAMPLE_MAX = 30;
/** Names shown per kind in a digest. */
export const NAMES_SHOWN = 10;

export function emptyPending(): Pending {
  return { joined: 0, left: 0, sample: [] };
}

export function isEmpty(p: Pending): boolean {
  return p.joined === 0 && p.left === 0;
}

export function addNotice(p: Pending, n: Notice): void {
  if (n.kind === "join") p.joined++;
  else p.left++;
  if (p.sample.length < SAMPLE_MAX) {
    p.sample.push(
      n.email
        ? [n.kind === "join" ? "j" : "l", n.name, n.email]
        : [n.kind === "join" ? "j" : "l", n.name],
    );
  }
}

/** What a posted message took out of `p`: the rest stays for the next one (it may have grown). */
export function subtract(p: Pending, taken: Pending): Pending {
  return {
    joined: Math.max(0, p.joined - taken.joined),
    left: Math.max(0, p.left - taken.left),
    sample: p.sample.slice(taken.sample.length),
  };
}

function person(name: string, email: string | undefined, showEmails: boolean): string {
  const n = escapeMrkdwn(truncate(name || "Someone", 80));
  return showEmails && email ? `${n} (${escapeMrkdwn(truncate(email, 120))})` : n;
}

function namesWithOthers(names: string[], total: number): string {
  const others = total - names.length;
  if (others <= 0) return names.join(", ");
  return `${names.join(", ")} and ${others} ${others === 1 ? "other" : "others"}`;
}

export interface DigestFigures {
  present: number;
}

/** One thread message for the pending notices, at the channel's noise level. */
export function digestText(
  noise: NoiseLevel,
  p: Pending,
  figures: DigestFigures,
  showEmails: boolean,
): string {
  const now = `Now ${figures.present} attending.`;
  if (noise === "every") {
    const lines = p.sample.map(
      ([k, name, email]) => `• ${person(name, email, showEmails)} ${k === "j" ? "joined" : "left"}`,
    );
    const shownJ = p.sample.filter((s) => s[0] === "j").length;
    const shownL = p.sample.length - shownJ;
    const moreJ = p.joined - shownJ;
    const moreL = p.left - shownL;
    const more: string[] = [];
    if (moreJ > 0) more.push(`${moreJ} more joined`);
    if (moreL > 0) more.push(`${moreL} more left`);
    if (more.length > 0) lines.push(`• and ${more.join(", ")}`);
    return [...lines, now].join("\n");
  }
  const parts: string[] = [];
  if (p.joined > 0) {
    const names = p.sample
      .filter((s) => s[0] === "j")
      .slice(0, NAMES_SHOWN)
      .map(([, n, e]) => person(n, e, showEmails));
    parts.push(
      `:inbox_tray: *${p.joined} joined*${names.length ? `: ${namesWithOthers(names, p.joined)}` : ""}`,
    );
  }
  if (p.left > 0) {
    const names = p.sample
      .filter((s) => s[0] === "l")
      .slice(0, NAMES_SHOWN)
      .map(([, n, e]) => person(n, e, showEmails));
    parts.push(
      `:outbox_tray: *${p.left} left*${names.length ? `: ${namesWithOthers(names, p.left)}` : ""}`,
    );
  }
  parts.push(now);
  return parts.join("\n");
}

/** The "counter only" level: one thread message, updated in place. */
export function counterText(f: { joins: number; leaves: number; present: number }): string {
  return `:bar_chart: So far ${f.joins} joined · ${f.leaves} left · ${f.present} attending now.`;
}
