import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@redis/client";
import type { Installation } from "@slack/bolt";
import pg from "pg";
import sqlite3 from "sqlite3";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  type CachedToken,
  createCipher,
  DEFAULT_SETTINGS,
  defineRepository,
  type EventRecord,
  hashWebhookSecret,
  openStore,
  type Settings,
  type Store,
  StoreError,
  type Subscription,
} from "../../src/store/index.ts";
import {
  describeBackends,
  type NamedBackend,
  storesOfEachTest,
  suiteDir,
} from "../helpers/backends.ts";
import { installationFor } from "../helpers/store-fixtures.ts";

/**
 * One suite, run against every backend (longer than 400 lines for that reason: every backend
 * gets the same tests from one place; backend-specific ones live in store-*.test.ts). Redis and Postgres come from TEST_REDIS_URL and
 * TEST_POSTGRES_URL; unset, their suites are skipped unless ONAIR_REQUIRE_SERVICES=1.
 * Every test opens its stores under a fresh namespace, so files and tests never collide.
 */

const cipher = createCipher(randomBytes(32));
const tmp = suiteDir("store");

type Raw = Array<[key: string, value: string]>;

interface Backend extends NamedBackend {
  name: "sqlite" | "memory" | "redis" | "postgres";
  /** Every key and raw stored text under `ns:`, read with the backend's own driver. */
  raw(url: string, ns: string): Promise<Raw>;
  /** A URL with nothing listening behind it. */
  deadUrl?: string;
  /** Rewrites the URL to go through 127.0.0.1:port (a proxy the test can cut). */
  via?(url: string, port: number): string;
}

const sqliteFile = () => join(tmp(), "db", `${randomUUID()}.sqlite`);

function sqliteRaw(url: string, ns: string): Promise<Raw> {
  const path = url.slice("sqlite://".length);
  return new Promise((resolve, reject) => {
    const db = new sqlite3.Database(path, sqlite3.OPEN_READONLY, (err) => {
      if (err) return reject(err);
      db.all(
        "SELECT key, value FROM keyv WHERE ? = '' OR substr(key, 1, ?) = ?",
        [ns, ns.length + 1, `${ns}:`],
        (e, rows: Array<{ key: string; value: string }>) => {
          db.close();
          if (e) reject(e);
          else resolve(rows.map((r) => [r.key, r.value]));
        },
      );
    });
  });
}

async function redisRaw(url: string, ns: string): Promise<Raw> {
  const c = createClient({ url });
  await c.connect();
  try {
    const out: Raw = [];
    let cursor = "0";
    do {
      const r = await c.scan(cursor, { MATCH: `${ns}:*`, COUNT: 1000 });
      cursor = String(r.cursor);
      for (const k of r.keys) {
        const v = await c.get(k);
        if (v !== null) out.push([String(k), String(v)]);
      }
    } while (cursor !== "0");
    return out;
  } finally {
    c.destroy();
  }
}

async function postgresRaw(url: string, ns: string): Promise<Raw> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ key: string; value: string }>(
      "SELECT key, value FROM keyv WHERE left(key, $1) = $2",
      [ns.length + 1, `${ns}:`],
    );
    return r.rows.map((row) => [row.key, row.value]);
  } finally {
    await c.end();
  }
}

function withHostPort(url: string, port: number): string {
  const u = new URL(url);
  u.hostname = "127.0.0.1";
  u.port = String(port);
  return u.toString();
}

/** memory:// has no outside reader; what the store holds is what anyone could read. */
const memoryStores = new Map<string, Store>();

const BACKENDS: Backend[] = [
  {
    name: "sqlite",
    url: () => `sqlite://${sqliteFile()}`,
    raw: sqliteRaw,
  },
  {
    name: "memory",
    url: () => `memory://${randomUUID()}`,
    async raw(_url, ns) {
      const s = memoryStores.get(ns);
      if (!s) throw new Error("no memory store for namespace");
      return (await s.entries<unknown>("")).map(([k, v]) => [
        `${ns}:${k}`,
        JSON.stringify({ value: v }),
      ]);
    },
  },
  {
    name: "redis",
    url: process.env.TEST_REDIS_URL ? () => process.env.TEST_REDIS_URL! : undefined,
    raw: redisRaw,
    deadUrl: "redis://127.0.0.1:1",
    via: withHostPort,
  },
  {
    name: "postgres",
    url: process.env.TEST_POSTGRES_URL ? () => process.env.TEST_POSTGRES_URL! : undefined,
    raw: postgresRaw,
    deadUrl: "postgresql://postgres@127.0.0.1:1/test",
    via: withHostPort,
  },
];

/** A TCP relay in front of a real server, which the test can cut like an outage. */
async function startProxy(target: string): Promise<{ port: number; cut(): Promise<void> }> {
  const u = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((down) => {
    const up = net.connect(
      Number(u.port || (u.protocol.startsWith("redis") ? 6379 : 5432)),
      u.hostname,
    );
    for (const s of [down, up]) {
      sockets.add(s);
      s.on("error", () => {});
      s.on("close", () => sockets.delete(s));
    }
    down.pipe(up).pipe(down);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    async cut() {
      const closed = new Promise<void>((r) => server.close(() => r()));
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

// A feature-defined repository, as later features add them: nested encrypted field, team by field.
const widgetRepo = defineRepository({
  prefix: "widget",
  schema: z.object({
    team: z.string(),
    label: z.string(),
    auth: z.object({ apiKey: z.string(), scopes: z.array(z.string()) }),
  }),
  encryptedFields: ["auth.apiKey", "auth.scopes"],
  team: { field: "team" },
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const BOT_TOKEN = "xoxb-111-222-BOTSECRETvalue";
const USER_TOKEN = "xoxp-111-222-USERSECRETvalue";
const REFRESH = "xoxe-1-REFRESHSECRETvalue";
const APP_SECRET = "events-app-SECRET-9f8e7d";
const RELAY_PASSWORD = "relay-PASSWORD-1a2b3c";
const ACCESS_TOKEN = "eyJ-ACCESS-TOKEN-SECRET-5d4c";
const WIDGET_KEY = "widget-APIKEY-SECRET-77";
const WEBHOOK_SECRET = "whsec-PLAINTEXT-SECRET-42";
const SECRETS = [
  BOT_TOKEN,
  USER_TOKEN,
  REFRESH,
  APP_SECRET,
  RELAY_PASSWORD,
  ACCESS_TOKEN,
  WIDGET_KEY,
  WEBHOOK_SECRET,
];

const installation = (team: string): Installation =>
  installationFor(team, { bot: BOT_TOKEN, user: USER_TOKEN, refresh: REFRESH });

function settings(): Settings {
  return {
    eventsAppKey: "app-key-plain",
    eventsAppSecret: APP_SECRET,
    relayUsername: "relay-user",
    relayPassword: RELAY_PASSWORD,
    policy: { whoMaySchedule: { usergroup: "S0ORGANIZERS" }, whoMayMint: "admins" },
    longestTokenMs: 3_600_000,
    auditChannel: "C0AUDIT",
    privacy: { showAttendeeEmails: true },
  };
}

function eventRecord(team: string, eventId: string): EventRecord {
  return {
    team,
    eventId,
    organizer: "U0ORG",
    upstreamUserId: 42,
    title: "All hands",
    subscriptions: [`sub-${team}-${eventId}`],
    cards: { C0LIVE: { ts: "1700000000.000100", threadTs: "1700000000.000100" } },
    instances: { "inst-1": { state: "IN_EVENT", present: 3, peak: 5, unique: 7 } },
    createdAt: 1_700_000_000_000,
    // Loose schema: fields a later feature adds survive the round trip.
    reminders: [{ at: 1_700_000_360_000, channel: "C0LIVE" }],
  };
}

function subscription(team: string, eventId: string): Subscription {
  return {
    team,
    eventId,
    channels: ["C0LIVE", "C0OTHER"],
    secretSha256: hashWebhookSecret(WEBHOOK_SECRET),
    types: ["EVENT_STATE", "ATTENDEE_INFO"],
    noise: "digest",
    createdBy: "U0ORG",
    createdAt: 1_700_000_000_000,
  };
}

const token = (userId?: number): CachedToken => ({
  accessToken: ACCESS_TOKEN,
  expiresAt: Date.now() + 3_600_000,
  ...(userId === undefined ? {} : { userId }),
  enterpriseId: 7,
});

/** Writes one of every record for `team`. */
async function populate(store: Store, team: string): Promise<void> {
  await store.installations.put(team, installation(team));
  await store.settings.put(team, settings());
  await store.users.put(team, "U0ALICE", {
    email: "alice@example.com",
    userId: 42,
    enterpriseId: 7,
  });
  await store.tokens.put(team, "user:alice@example.com", token(42));
  await store.tokens.cache.set(`${team}:enterprise`, token());
  await store.events.put(eventRecord(team, "ev1"));
  await store.subscriptions.put(`sub-${team}-ev1`, subscription(team, "ev1"));
  await store.outbox.put({
    team,
    subscriptionId: `sub-${team}-ev1`,
    eventId: "ev1",
    receivedAt: Date.now(),
    message: { type: "EVENT_STATE", info: { state: "IN_EVENT" } },
  });
  await store.audit.append(team, { actor: "U0ORG", action: "event.schedule", target: "ev1" });
  await store
    .repository(widgetRepo)
    .put(`w-${team}`, { team, label: "w", auth: { apiKey: WIDGET_KEY, scopes: ["a"] } });
}

function expectStoreError(err: unknown, code?: string): StoreError {
  expect(err).toBeInstanceOf(StoreError);
  const e = err as StoreError;
  if (code) expect(e.code).toBe(code);
  return e;
}

async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected the call to fail, and it succeeded");
}

describeBackends("store", BACKENDS, (backend) => {
  const stores = storesOfEachTest(backend, { cipher, repositories: [widgetRepo] });
  const another = stores.another;
  /** A fresh namespace (and, for file/memory backends, a fresh database) per test. */
  async function fresh(): Promise<{ store: Store; url: string; ns: string }> {
    const opened = await stores.fresh();
    memoryStores.set(opened.ns, opened.store);
    return opened;
  }

  it("gets, sets, deletes and expires raw values", async () => {
    const { store } = await fresh();
    expect(await store.get("k:missing")).toBeUndefined();
    await store.set("k:obj", { a: 1, nested: { b: [1, "two", null] }, s: ":colon" });
    expect(await store.get("k:obj")).toEqual({
      a: 1,
      nested: { b: [1, "two", null] },
      s: ":colon",
    });
    await store.set("k:str", "plain");
    expect(await store.get<string>("k:str")).toBe("plain");
    await store.set("k:str", "replaced");
    expect(await store.get<string>("k:str")).toBe("replaced");
    expect(await store.delete("k:str")).toBe(true);
    expect(await store.delete("k:str")).toBe(false);
    expect(await store.get("k:str")).toBeUndefined();

    // Lifetimes here are long enough that a busy CI machine cannot outlast them between two
    // calls (a 60 ms claim once expired before the next statement reached Postgres).
    await store.set("k:ttl", "soon gone", 300);
    expect(await store.get("k:ttl")).toBe("soon gone");
    await sleep(400);
    expect(await store.get("k:ttl")).toBeUndefined();
    expect(await store.keys("k:ttl")).toEqual([]);

    await expect(store.set("k:undef", undefined)).rejects.toBeInstanceOf(StoreError);
    await expect(store.get("x".repeat(300))).rejects.toBeInstanceOf(StoreError);
  });

  it("lists by exact prefix in byte order, literal about wildcard characters", async () => {
    const { store } = await fresh();
    const keys = [
      "user:T1:b",
      "user:T1:a",
      "user:T10:a",
      "user:T1%:x",
      "user:T1_:x",
      "user:T1*:x",
      "user:T1?:x",
      "user:T1[:x",
      "USER:T1:a",
      "user:T",
    ];
    // Issued together: one batch on SQLite, pipelined elsewhere.
    await Promise.all(keys.map((k, i) => store.set(k, i)));
    expect(await store.keys("user:T1:")).toEqual(["user:T1:a", "user:T1:b"]);
    expect(await store.keys("user:T1%")).toEqual(["user:T1%:x"]);
    expect(await store.keys("user:T1_")).toEqual(["user:T1_:x"]);
    expect(await store.keys("user:T1*")).toEqual(["user:T1*:x"]);
    expect(await store.keys("user:T1?")).toEqual(["user:T1?:x"]);
    expect(await store.keys("user:T1[")).toEqual(["user:T1[:x"]);
    expect(await store.keys("user:T1")).toEqual([
      "user:T1%:x",
      "user:T1*:x",
      "user:T10:a",
      "user:T1:a",
      "user:T1:b",
      "user:T1?:x",
      "user:T1[:x",
      "user:T1_:x",
    ]);
    expect(await store.entries("user:T1:", { reverse: true })).toEqual([
      ["user:T1:b", 0],
      ["user:T1:a", 1],
    ]);
    expect(await store.entries("user:T1", { limit: 2 })).toEqual([
      ["user:T1%:x", 3],
      ["user:T1*:x", 5],
    ]);
    // After a key (exclusive), within the prefix: a walk that skips past one id's keys.
    const keysAfter = async (prefix: string, after: string) =>
      (await store.entries(prefix, { after })).map(([k]) => k);
    expect(await keysAfter("user:T1", "user:T10:a")).toEqual([
      "user:T1:a",
      "user:T1:b",
      "user:T1?:x",
      "user:T1[:x",
      "user:T1_:x",
    ]);
    expect(await store.entries("user:T1", { after: "user:T1:\u{10FFFF}", limit: 1 })).toEqual([
      ["user:T1?:x", 6],
    ]);
    // A key before the prefix lists from the prefix; one past it lists nothing.
    expect(await keysAfter("user:T1:", "user:T")).toEqual(["user:T1:a", "user:T1:b"]);
    expect(await keysAfter("user:T1:", "user:T2")).toEqual([]);
    expect(await store.deletePrefix("user:T1:")).toBe(2);
    expect(await store.keys("user:T1:")).toEqual([]);
    expect(await store.get("user:T10:a")).toBe(2);
    expect(await store.deleteMany(["user:T10:a", "user:T", "user:none"])).toBe(2);
  });

  it("writes a turn's many awkward values in its group commits, each read back exactly", async () => {
    const { store } = await fresh();
    // More than one group's worth (SQLite 64 rows, Redis's script, Postgres 500), with what a
    // statement's text or an escaping step could get wrong.
    const awkward = [
      `quote " backslash \\ brace } comma , paren ) semicolon ; -- 'single'`,
      "emoji 🎙️ and accents é ñ, RTL שלום, tab\tnewline\n, NUL-ish \u0000 text",
      "x".repeat(20_000),
    ];
    const values = Array.from({ length: 620 }, (_, i) => ({
      i,
      text: `${awkward[i % awkward.length]}#${i}`,
      nested: { list: [i, `${i}"`, null] },
    }));
    await Promise.all(values.map((v) => store.set(`awk:${String(v.i).padStart(4, "0")}`, v)));
    const rows = await store.entries<(typeof values)[number]>("awk:");
    expect(rows.map(([, v]) => v)).toEqual(values);
  });

  it("keeps the last of many writes to one key issued turn after turn, and reads its own writes", async () => {
    const { store } = await fresh();
    const writes: Array<Promise<void>> = [];
    for (let i = 0; i < 40; i++) {
      // Each in a group of its own while earlier ones may still be in flight.
      writes.push(store.set("k:last", i));
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(writes);
    expect(await store.get("k:last")).toBe(39);
    expect(store.pendingWrites()).toBe(0);
    // A delete issued right behind a write lands after it.
    const w = store.set("k:gone", 1);
    expect(await store.delete("k:gone")).toBe(true);
    await w;
    expect(await store.get("k:gone")).toBeUndefined();
  });

  it("lists what it holds after deletes and expiry, with unrelated keys around", async () => {
    const { store } = await fresh();
    const pad = (i: number) => String(i).padStart(2, "0");
    // Keys that share the start of the listed prefix but are not under it.
    await Promise.all([
      ...Array.from({ length: 300 }, (_, i) =>
        store.set([`ev:T1x:${i}`, `evx:${i}`, `e:${i}`][i % 3]!, i),
      ),
      ...Array.from({ length: 20 }, (_, i) => store.set(`ev:T1:${pad(i)}`, i)),
    ]);
    await store.set("ev:T1:zz-ttl", "gone soon", 40);
    expect(await store.delete("ev:T1:03")).toBe(true);
    expect(await store.deleteMany(["ev:T1:04", "ev:T1:05", "ev:T1:none"])).toBe(2);
    expect(await store.deletePrefix("ev:T1:1")).toBe(10);
    await sleep(80);
    const left = [0, 1, 2, 6, 7, 8, 9].map((i) => `ev:T1:${pad(i)}`);
    expect(await store.keys("ev:T1:")).toEqual(left);
    await store.sweepExpired();
    expect(await store.entries("ev:T1:", { reverse: true, limit: 2 })).toEqual([
      ["ev:T1:09", 9],
      ["ev:T1:08", 8],
    ]);
    // Written again after its delete, a key is listed again.
    await store.set("ev:T1:03", "back");
    expect(await store.keys("ev:T1:0")).toEqual([
      "ev:T1:00",
      "ev:T1:01",
      "ev:T1:02",
      "ev:T1:03",
      ...left.slice(3),
    ]);
    expect(await store.keys("ev:T1x:")).toHaveLength(100);
    expect(await store.keys("e")).toHaveLength(300 + left.length + 1);
  });

  it("round-trips every repository", async () => {
    const { store } = await fresh();
    await populate(store, "T1");

    expect(await store.installations.get("T1")).toEqual(installation("T1"));
    expect(await store.installations.get("T404")).toBeUndefined();
    expect(await store.settings.get("T1")).toEqual(settings());
    expect(await store.settings.getOrDefault("T2")).toEqual(DEFAULT_SETTINGS);
    expect(await store.users.get("T1", "U0ALICE")).toEqual({
      email: "alice@example.com",
      userId: 42,
      enterpriseId: 7,
    });
    expect(await store.users.list("T1")).toEqual([
      { slackUser: "U0ALICE", link: { email: "alice@example.com", userId: 42, enterpriseId: 7 } },
    ]);
    expect(await store.tokens.get("T1", "user:alice@example.com")).toMatchObject({
      accessToken: ACCESS_TOKEN,
      userId: 42,
      enterpriseId: 7,
    });
    expect(await store.tokens.cache.get("T1:user:alice@example.com")).toMatchObject({
      accessToken: ACCESS_TOKEN,
    });
    expect(await store.tokens.cache.get("T1:enterprise")).toMatchObject({ enterpriseId: 7 });
    await store.tokens.cache.delete("T1:enterprise");
    expect(await store.tokens.cache.get("T1:enterprise")).toBeUndefined();
    await store.tokens.cache.set("T1:expired", { ...token(), expiresAt: Date.now() - 1 });
    expect(await store.tokens.cache.get("T1:expired")).toBeUndefined();

    expect(await store.events.get("T1", "ev1")).toEqual(eventRecord("T1", "ev1"));
    expect((await store.events.list("T1")).map((e) => e.eventId)).toEqual(["ev1"]);
    const sub = await store.subscriptions.get("sub-T1-ev1");
    expect(sub).toEqual(subscription("T1", "ev1"));
    expect((await store.subscriptions.forEvent("T1", "ev1")).map((s) => s.id)).toEqual([
      "sub-T1-ev1",
    ]);
    expect(await store.repository(widgetRepo).get("w-T1")).toEqual({
      team: "T1",
      label: "w",
      auth: { apiKey: WIDGET_KEY, scopes: ["a"] },
    });

    await expect(
      store.settings.put("T1", { ...settings(), longestTokenMs: -5 }),
    ).rejects.toMatchObject({ code: "store_invalid" });
    await expect(store.users.get("T1:x", "U1")).rejects.toMatchObject({ code: "store_invalid" });
  });

  it("keys outbox items per event, with a marker per event that only what it read clears", async () => {
    const { store } = await fresh();
    const put = (team: string, eventId: string, i: number) =>
      store.outbox.put({ team, subscriptionId: "s", eventId, receivedAt: i, message: { i } });
    const a1 = await put("T1", "evA", 1);
    const b1 = await put("T1", "evB", 2);
    const a2 = await put("T1", "evA", 3);
    const c1 = await put("T2", "evA", 4);
    // Each awaited alone: a record (batch) of its own, `{team}:{eventId}:{seq}`, item 0 of it.
    expect(a1).toMatch(/^T1:evA:[^/]+\/0$/);
    const record = (id: string) => id.slice(0, id.lastIndexOf("/"));
    expect((await store.outbox.listEvent("T1", "evA")).map((x) => x.id)).toEqual([a1, a2]);
    expect((await store.outbox.listEvent("T1", "evA", 1)).map((x) => x.id)).toEqual([a1]);
    expect((await store.outbox.listEvent("T2", "evA")).map((x) => x.id)).toEqual([c1]);
    expect((await store.outbox.get(a2))?.message).toEqual({ i: 3 });
    const work = await store.outbox.work();
    // Markers name records.
    expect(work.map((w) => [w.team, w.eventId, w.last])).toEqual([
      ["T1", "evA", record(a2)],
      ["T1", "evB", record(b1)],
      ["T2", "evA", record(c1)],
    ]);
    const [markA, markB] = work;
    // A marker rewritten by a newer item since it was read stays.
    const a3 = await put("T1", "evA", 5);
    expect(await store.outbox.settle(markA!)).toBe(false);
    expect(
      (await store.outbox.work()).find((w) => w.eventId === "evA" && w.team === "T1")?.last,
    ).toBe(record(a3));
    expect(await store.outbox.settle(markB!)).toBe(true);
    // Cleared by expiring it in a millisecond (compare-and-set has no delete).
    await new Promise((r) => setTimeout(r, 5));
    expect((await store.outbox.work()).map((w) => `${w.team}:${w.eventId}`)).toEqual([
      "T1:evA",
      "T2:evA",
    ]);
    // Written again after it was cleared: back.
    await put("T1", "evB", 6);
    expect((await store.outbox.work()).some((w) => w.eventId === "evB")).toBe(true);
    // None of them is an item of earlier versions.
    expect(await store.outbox.listLegacy()).toEqual([]);
    const counts = store.outbox.counts();
    expect(counts.written).toBe(6);
    // Three event listings, four of the markers, one legacy read.
    expect(counts.reads).toBe(8);
    await store.deleteTeam("T1");
    expect((await store.outbox.work()).map((w) => w.team)).toEqual(["T2"]);
    expect((await store.outbox.list()).map((x) => x.id)).toEqual([c1]);
  });

  it("keeps the outbox in arrival order and the audit log newest first, without tokens", async () => {
    const { store } = await fresh();
    const ids: string[] = [];
    for (let i = 0; i < 25; i++) {
      ids.push(
        await store.outbox.put({
          team: "T1",
          subscriptionId: "s",
          receivedAt: i,
          message: { i },
        }),
      );
    }
    const listed = await store.outbox.list();
    expect(listed.map((x) => x.id)).toEqual(ids);
    expect(listed.map((x) => (x.item.message as { i: number }).i)).toEqual([...Array(25).keys()]);
    expect((await store.outbox.list(3)).map((x) => x.id)).toEqual(ids.slice(0, 3));
    expect(await store.outbox.remove(ids[0]!)).toBe(true);
    expect(await store.outbox.get(ids[0]!)).toBeUndefined();
    expect((await store.outbox.list(1))[0]?.id).toBe(ids[1]);

    // What earlier versions wrote (no event named) is keyed by sequence alone: the legacy read.
    expect((await store.outbox.listLegacy(2)).map((x) => x.id)).toEqual(ids.slice(1, 3));
    expect(await store.outbox.work()).toEqual([]);

    for (const action of ["event.schedule", "event.edit", "token.mint"]) {
      await store.audit.append("T1", {
        actor: "U0ORG",
        action,
        details: { token: ACCESS_TOKEN, note: `minted with Bearer ${ACCESS_TOKEN}`, roles: "r" },
      });
    }
    const audit = await store.audit.list("T1");
    expect(audit.map((a) => a.entry.action)).toEqual([
      "token.mint",
      "event.edit",
      "event.schedule",
    ]);
    expect((await store.audit.list("T1", 1)).map((a) => a.entry.action)).toEqual(["token.mint"]);
    expect(audit[0]!.entry.details?.roles).toBe("r");
    expect(JSON.stringify(audit)).not.toContain(ACCESS_TOKEN);
  });

  it("stores secrets only as ciphertext bound to their key", async () => {
    const { store, url, ns } = await fresh();
    await populate(store, "T1");
    const raw = await backend.raw(url, ns);
    expect(raw.length).toBeGreaterThanOrEqual(10);
    const text = JSON.stringify(raw);
    for (const s of SECRETS) expect(text).not.toContain(s);
    // Plain fields stay plain (so the check above is not vacuous).
    expect(text).toContain("app-key-plain");
    expect(text).toContain(hashWebhookSecret(WEBHOOK_SECRET));

    // A ciphertext copied to another key does not decrypt there.
    const moved = await store.get<unknown>("install:T1");
    await store.set("install:T9", moved);
    const err = expectStoreError(await rejection(store.installations.get("T9")), "store_corrupt");
    expect(err.message).toContain("install:T9");
    for (const s of SECRETS) expect(err.message).not.toContain(s);
  });

  it("deleteTeam leaves no key of that team and every key of another", async () => {
    const { store, url, ns } = await fresh();
    await populate(store, "T1");
    await populate(store, "T2");
    // A team whose id starts with the other's.
    await populate(store, "T10");
    const before = await backend.raw(url, ns);
    const ofOthers = before.filter(([k, v]) => !belongsTo(k, v, ns, "T1"));
    expect(before.length - ofOthers.length).toBeGreaterThanOrEqual(10);

    const removed = await store.deleteTeam("T1");
    expect(removed).toBe(before.length - ofOthers.length);
    const after = await backend.raw(url, ns);
    expect(after.filter(([k, v]) => belongsTo(k, v, ns, "T1"))).toEqual([]);
    expect(after.map(([k]) => k).sort()).toEqual(ofOthers.map(([k]) => k).sort());
    expect(await store.installations.get("T10")).toEqual(installation("T10"));
    expect(await store.deleteTeam("T1")).toBe(0);
    await expect(store.deleteTeam("")).rejects.toBeInstanceOf(StoreError);
  });

  it("claimOnce: exactly one of 50 concurrent claimers, across two store instances", async () => {
    const { store, url, ns } = await fresh();
    const other = await another(url, ns);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => (i % 2 ? other : store).claimOnce("claim:a", 10_000)),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.claimOnce("claim:a", 10_000)).toBe(false);
    expect(await other.claimOnce("claim:b", 10_000)).toBe(true);
  });

  it("update is a compare-and-set: of concurrent increments, exactly those that wrote count", async () => {
    const { store, url, ns } = await fresh();
    const other = await another(url, ns);
    await store.set("cas:n", { n: 0 }, 60_000);
    const wrote = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? other : store).update<{ n: number }>("cas:n", (v) => ({
          value: { n: v.n + 1 },
          ttlMs: 60_000,
        })),
      ),
    );
    const won = wrote.filter(Boolean).length;
    expect(won).toBeGreaterThanOrEqual(1);
    // A lost update would leave n below the number of writes that reported success.
    expect(await store.get("cas:n")).toEqual({ n: won });
    expect(await store.update("cas:missing", () => ({ value: 1 }))).toBe(false);
    expect(await store.update("cas:n", () => undefined)).toBe(false);
    expect(await store.keys("cas:")).toEqual(["cas:n"]);
  });

  it("claimOnce: an expired claim can be claimed again, once", async () => {
    const { store, url, ns } = await fresh();
    const other = await another(url, ns);
    expect(await store.claimOnce("claim:x", 400)).toBe(true);
    expect(await other.claimOnce("claim:x", 400)).toBe(false);
    await sleep(500);
    const again = await Promise.all(
      Array.from({ length: 20 }, (_, i) => (i % 2 ? other : store).claimOnce("claim:x", 10_000)),
    );
    expect(again.filter(Boolean)).toHaveLength(1);
    // A plain value without expiry is never claimable.
    await store.set("claim:plain", "v");
    expect(await store.claimOnce("claim:plain", 1000)).toBe(false);
  });

  it("claimOnce with an owner: only the owner extends it, and a lapsed one is lost", async () => {
    const { store, url, ns } = await fresh();
    const other = await another(url, ns);
    const extend = (s: typeof store, owner: string, ttlMs: number) =>
      s.update<string>("lease:e", (held) => (held === owner ? { value: owner, ttlMs } : undefined));
    expect(await store.claimOnce("lease:e", 500, "me")).toBe(true);
    expect(await other.claimOnce("lease:e", 500, "you")).toBe(false);
    expect(await extend(other, "you", 10_000)).toBe(false);
    // Extended past the first expiry: nobody else can claim it after the first 500 ms.
    expect(await extend(store, "me", 10_000)).toBe(true);
    await sleep(600);
    expect(await other.claimOnce("lease:e", 500, "you")).toBe(false);
    expect(await store.get("lease:e")).toBe("me");
    // Given back by its owner (a 1 ms lease): the next claimer gets it, and the old owner's
    // extension fails from then on.
    expect(await extend(store, "me", 1)).toBe(true);
    await sleep(20);
    expect(await other.claimOnce("lease:e", 300, "you")).toBe(true);
    expect(await extend(store, "me", 10_000)).toBe(false);
    await sleep(400);
    // Lapsed: even its owner cannot extend it.
    expect(await extend(other, "you", 10_000)).toBe(false);
  });

  it("keeps data across close and reopen", async () => {
    const { store, url, ns } = await fresh();
    await populate(store, "T1");
    await store.close();
    await expect(store.get("install:T1")).rejects.toMatchObject({ code: "store_closed" });
    await expect(store.ping()).rejects.toBeInstanceOf(StoreError);
    const reopened = await another(url, ns);
    expect(await reopened.installations.get("T1")).toEqual(installation("T1"));
    expect(await reopened.settings.get("T1")).toEqual(settings());
  });

  if (backend.deadUrl && backend.via) {
    const { deadUrl, via } = backend;

    it("fails to open, clearly, when nothing listens", async () => {
      const err = expectStoreError(
        await rejection(openStore(deadUrl, { cipher, connectTimeoutMs: 2_000 })),
        "store_unavailable",
      );
      expect(err.op).toBe("open");
      expect(err.message).toMatch(/ECONNREFUSED|refused/i);
    });

    it("surfaces an outage as errors on every operation, never as not-found", async () => {
      const { store: seed, url, ns } = await fresh();
      await seed.installations.put("T1", installation("T1"));
      const proxy = await startProxy(url);
      const store = await openStore(via(url, proxy.port), {
        cipher,
        namespace: ns,
        sweepIntervalMs: 0,
        connectTimeoutMs: 2_000,
      });
      stores.track(store);
      expect(await store.installations.get("T1")).toEqual(installation("T1"));
      await proxy.cut();
      const calls: Array<[string, () => Promise<unknown>]> = [
        ["installations.get", () => store.installations.get("T1")],
        ["get", () => store.get("install:T1")],
        ["set", () => store.set("k", 1)],
        ["delete", () => store.delete("install:T1")],
        ["keys", () => store.keys("install:")],
        ["claimOnce", () => store.claimOnce("claim:z", 1000)],
        ["deleteTeam", () => store.deleteTeam("T1")],
        ["tokens.cache.get", () => store.tokens.cache.get("T1:enterprise")],
        ["ping", () => store.ping()],
      ];
      for (const [name, call] of calls) {
        const err = await rejection(call());
        expect(err, name).toBeInstanceOf(StoreError);
        expect((err as StoreError).code, name).toBe("store_unavailable");
      }
      // Nothing was lost or changed behind the outage.
      expect(await seed.installations.get("T1")).toEqual(installation("T1"));
    });
  }
});

/** Whether a raw key/value belongs to `team` (by key segment or by its `team` field). */
function belongsTo(key: string, value: string, ns: string, team: string): boolean {
  const k = key.slice(ns.length + 1);
  const segs = k.split(":");
  if (segs[1] === team) return true;
  try {
    const v = JSON.parse(value) as { value?: { team?: unknown } };
    return v.value?.team === team;
  } catch {
    return false;
  }
}

describe("store on sqlite: files", () => {
  it("creates parent directories and refuses in-memory or unusable paths", async () => {
    const dir = await mkdtemp(join(tmpdir(), "onair-sqlite-"));
    try {
      const path = join(dir, "a", "b", "store.sqlite");
      const s = await openStore(`sqlite://${path}`, { cipher, sweepIntervalMs: 0 });
      await s.set("k", 1);
      await s.close();
      const raw = await sqliteRaw(`sqlite://${path}`, "");
      expect(raw).toEqual([["k", '{"value":1}']]);

      for (const url of ["sqlite://", "sqlite://:memory:"]) {
        expectStoreError(await rejection(openStore(url, { cipher })), "store_bad_url");
      }
      const notADir = join(dir, "file");
      await writeFile(notADir, "x");
      expectStoreError(
        await rejection(openStore(`sqlite://${join(notADir, "db.sqlite")}`, { cipher })),
        "store_unavailable",
      );
      const garbage = join(dir, "garbage.sqlite");
      await writeFile(garbage, "this is not a database, it is text ".repeat(200));
      expectStoreError(
        await rejection(openStore(`sqlite://${garbage}`, { cipher })),
        "store_unavailable",
      );
      expectStoreError(await rejection(openStore("ftp://x", { cipher })), "store_bad_url");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("group-commits writes issued together, the last write to a key winning", async () => {
    const s = await openStore(`sqlite://${sqliteFile()}`, { cipher, sweepIntervalMs: 0 });
    try {
      const writes = Array.from({ length: 300 }, (_, i) => s.set(`k:${i % 100}`, i));
      await Promise.all(writes);
      const all = await s.entries<number>("k:");
      expect(all).toHaveLength(100);
      for (const [k, v] of all) expect(v).toBe(Number(k.slice(2)) + 200);
    } finally {
      await s.close();
    }
  });

  it("purges expired entries nobody reads", async () => {
    const s = await openStore(`sqlite://${sqliteFile()}`, { cipher, sweepIntervalMs: 0 });
    try {
      await s.set("a", 1, 20);
      await s.claimOnce("b", 20);
      await s.set("c", 1);
      await sleep(50);
      expect(await s.sweepExpired()).toBe(2);
      expect(await s.keys("")).toEqual(["c"]);
    } finally {
      await s.close();
    }
  });
});
