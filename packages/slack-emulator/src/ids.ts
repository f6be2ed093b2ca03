import { randomBytes } from "node:crypto";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** Slack-looking ids: a type letter then upper-case letters and digits (C…, U…, V…, Q…). */
export function slackId(prefix: string, length = 10): string {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const b of bytes) out += ALNUM[b % ALNUM.length];
  return out;
}

export function randomHex(bytes: number): string {
  return randomBytes(bytes).toString("hex");
}

/** "1700000000.000100": whole seconds, a dot, six digits of microseconds. */
export function formatTs(micros: number): string {
  const sec = Math.floor(micros / 1_000_000);
  const frac = String(micros % 1_000_000).padStart(6, "0");
  return `${sec}.${frac}`;
}

export function parseTs(ts: string): number | undefined {
  const m = /^(\d{1,12})\.(\d{6})$/.exec(ts);
  if (!m) return undefined;
  return Number(m[1]) * 1_000_000 + Number(m[2]);
}
