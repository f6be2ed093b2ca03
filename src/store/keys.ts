import { randomBytes } from "node:crypto";
import { STORE_ERROR_CODES, StoreError } from "./errors.ts";

/** The parts of record ids: time-ordered ids, and id parts checked for the separator. */

let lastMs = 0;
let seq = 0;
// Ids from two processes in the same ms and counter differ by this (6 random hex digits, drawn
// once per process: drawing per id showed in the webhook ingest profile).
const processTag = randomBytes(3).toString("hex");

/**
 * Ids that sort by creation time: ms since epoch, then a counter within the ms (strictly
 * increasing within this process even if the clock steps back), then a per-process tag and
 * randomness so ids from several instances never collide.
 */
export function timeOrderedId(now = Date.now()): string {
  if (now > lastMs) {
    lastMs = now;
    seq = 0;
  } else {
    seq++;
  }
  return `${lastMs.toString(36).padStart(9, "0")}-${seq.toString(36).padStart(4, "0")}-${processTag}`;
}

export function badId(what: string, v: unknown): never {
  throw new StoreError(
    STORE_ERROR_CODES.invalid,
    "validate",
    "schema",
    undefined,
    `${what} (got ${JSON.stringify(v)})`,
  );
}

export function part(name: string, v: string): string {
  if (typeof v !== "string" || v === "" || v.includes(":")) {
    badId(`${name} must be a non-empty id without ":"`, v);
  }
  return v;
}
