import type { InstanceLive, Person } from "./instance.ts";

/**
 * How an instance's sessions are stored: one line per endpoint,
 * `guid,joinTime,leaveTime,…[\tname\temail\tendpointType]` (the tab part since the attendance
 * report, which needs who and how; older lines without it still read). Kept in chunks of
 * ENCODE_CHUNK endpoints so a turn rewrites only the chunks it touched.
 */

const ESCAPES: Readonly<Record<string, string>> = {
  "%": "%25",
  ",": "%2C",
  "\n": "%0A",
  "\t": "%09",
};

function escapeField(g: string): string {
  return /[%,\n\t]/.test(g) ? g.replace(/[%,\n\t]/g, (c) => ESCAPES[c] ?? c) : g;
}

function unescapeField(g: string): string {
  if (!g.includes("%")) return g;
  try {
    return decodeURIComponent(g);
  } catch {
    return g;
  }
}

/**
 * The encoded sessions, kept between persists in chunks of endpoints (in first-seen order). The
 * worker persists after every batch; re-encoding 20,000 unchanged sessions each time (and even
 * looking each one's cached line up) stalled the event loop for milliseconds per turn and showed
 * high in the ingest profile. Now a turn re-encodes only the chunks whose endpoints it touched
 * (a burst of new attendees touches the last one) and joins the chunk texts. apply() is the only
 * writer of sessions and marks the chunk of the endpoint it touches.
 */
export const ENCODE_CHUNK = 256;

export interface Encoding {
  /** Endpoints in the sessions map's order. */
  guids: string[];
  /** endpointGuid → position in `guids`. */
  index: Map<string, number>;
  /** The text of each chunk of ENCODE_CHUNK endpoints; undefined = to encode again. */
  texts: Array<string | undefined>;
  /** Chunks changed since the last persist() (every chunk of a fresh encoding). */
  dirty: Set<number>;
}

const encodings = new WeakMap<InstanceLive, Encoding>();

function encodingFor(inst: InstanceLive): Encoding {
  const guids = [...inst.sessions.keys()];
  const index = new Map<string, number>();
  for (let i = 0; i < guids.length; i++) index.set(guids[i] as string, i);
  const count = Math.ceil(guids.length / ENCODE_CHUNK);
  const e: Encoding = {
    guids,
    index,
    texts: new Array(count),
    dirty: new Set(Array.from({ length: count }, (_, n) => n)),
  };
  encodings.set(inst, e);
  return e;
}

/**
 * Sessions just read from stored chunks keep those chunks as their encoding when they line up
 * (each chunk but the last adding exactly ENCODE_CHUNK endpoints, the last 1 to ENCODE_CHUNK;
 * `ends` is the sessions' count after each chunk), with nothing dirty: the first save after a
 * load then writes only the chunks its messages touch, not all of them (about 200 for a
 * 50,000-attendee instance, at every acquire). Otherwise the first save writes them all.
 */
export function adoptEncoding(
  inst: InstanceLive,
  texts: readonly string[],
  ends: readonly number[],
): void {
  for (let c = 0; c < texts.length; c++) {
    const size = (ends[c] ?? 0) - (c === 0 ? 0 : (ends[c - 1] ?? 0));
    const last = c === texts.length - 1;
    if (last ? size < 1 || size > ENCODE_CHUNK : size !== ENCODE_CHUNK) return;
  }
  const guids = [...inst.sessions.keys()];
  const index = new Map<string, number>();
  for (let i = 0; i < guids.length; i++) index.set(guids[i] as string, i);
  encodings.set(inst, { guids, index, texts: [...texts], dirty: new Set() });
}

/** The encoding of an instance, if one was made (a persist whose write failed marks it dirty). */
export function encodingOf(inst: InstanceLive): Encoding | undefined {
  return encodings.get(inst);
}

/** The instance's encoding, rebuilt when sessions changed behind apply()'s back. */
export function currentEncoding(inst: InstanceLive): Encoding {
  const e = encodings.get(inst);
  // Sessions are only ever added through apply(), which keeps the encoding in step; a size that
  // disagrees would mean another writer, and a fresh encoding is always right.
  return e && e.guids.length === inst.sessions.size ? e : encodingFor(inst);
}

export function chunkText(inst: InstanceLive, e: Encoding, c: number): string {
  const cached = e.texts[c];
  if (cached !== undefined) return cached;
  const end = Math.min(e.guids.length, (c + 1) * ENCODE_CHUNK);
  const lines: string[] = [];
  for (let i = c * ENCODE_CHUNK; i < end; i++) {
    const guid = e.guids[i] as string;
    lines.push(encodeLine(guid, inst.sessions.get(guid) ?? [], inst.people.get(guid)));
  }
  const text = lines.join("\n");
  e.texts[c] = text;
  return text;
}

/** The endpoint's line changed (or is new): its chunk is encoded again at the next persist. */
export function touched(inst: InstanceLive, guid: string): void {
  const e = encodings.get(inst);
  if (!e) return;
  let i = e.index.get(guid);
  if (i === undefined) {
    i = e.guids.length;
    e.guids.push(guid);
    e.index.set(guid, i);
  }
  const c = Math.floor(i / ENCODE_CHUNK);
  e.texts[c] = undefined;
  e.dirty.add(c);
}

function encodeLine(guid: string, flat: readonly number[], person: Person | undefined): string {
  const head = `${escapeField(guid)},${flat.join(",")}`;
  if (!person) return head;
  const { name, email, endpointType } = person;
  return `${head}\t${escapeField(name)}\t${escapeField(email ?? "")}\t${escapeField(endpointType)}`;
}

export function encodeCached(inst: InstanceLive): string {
  const e = currentEncoding(inst);
  const chunks = Math.ceil(e.guids.length / ENCODE_CHUNK);
  const texts: string[] = [];
  for (let c = 0; c < chunks; c++) texts.push(chunkText(inst, e, c));
  return texts.join("\n");
}

export function encodeSessions(
  sessions: ReadonlyMap<string, readonly number[]>,
  people?: ReadonlyMap<string, Person>,
): string {
  const lines: string[] = [];
  for (const [guid, flat] of sessions) lines.push(encodeLine(guid, flat, people?.get(guid)));
  return lines.join("\n");
}

export type DecodedLine = [string, number[]] | [string, number[], Person];

/** Lines that do not parse are skipped: one bad line must not lose the rest. */
export function decodeSessions(text: unknown): DecodedLine[] {
  if (typeof text !== "string" || text === "") return [];
  const out: DecodedLine[] = [];
  for (const line of text.split("\n")) {
    const [head = "", name, email, endpointType] = line.split("\t");
    const parts = head.split(",");
    const guid = parts[0];
    if (guid === undefined || guid === "" || parts.length < 3 || parts.length % 2 === 0) continue;
    const flat = parts.slice(1).map(Number);
    if (flat.some((n) => !Number.isFinite(n))) continue;
    if (name === undefined || endpointType === undefined) {
      out.push([unescapeField(guid), flat]);
      continue;
    }
    const person: Person = { name: unescapeField(name), endpointType: unescapeField(endpointType) };
    if (email) person.email = unescapeField(email);
    out.push([unescapeField(guid), flat, person]);
  }
  return out;
}
