import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { createClient } from "@redis/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type OnAirApp, startApp } from "../../src/app.ts";
import { loadConfig } from "../../src/config.ts";
import { stepRunKey } from "../../src/slack/functions/run.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { submissionKey } from "../../src/slack/views/once.ts";
import { hashWebhookSecret } from "../../src/store/index.ts";
import { CHANNELS, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";

/**
 * Uninstall forgets the workspace: after app_uninstalled and tokens_revoked (either order) no key
 * of the team is left, on SQLite and on Redis, and another team's data is untouched. The app runs
 * in OAuth mode, so the installation itself is among what goes.
 */

const REQUIRE = process.env.ONAIR_REQUIRE_SERVICES === "1";
const REDIS = process.env.TEST_REDIS_URL;
const OTHER = "T0OTHERTEAM";

interface Run {
  app: OnAirApp;
  emulator: SlackEmulator;
  logs: string[];
  secrets: string[];
  close(): Promise<void>;
}

/** The harness's setup, plus a store namespace so runs sharing one Redis never collide. */
async function start(storeUrl: string, namespace: string | undefined): Promise<Run> {
  const signingSecret = randomBytes(16).toString("hex");
  const stateSecret = randomBytes(16).toString("hex");
  const encryptionKey = randomBytes(32).toString("base64");
  const emulator = await startSlackEmulator({ signingSecret, seed: { botScopes: botScopes() } });
  const dir = mkdtempSync(join(tmpdir(), "onair-uninstall-"));
  const logs: string[] = [];
  const app = await startApp({
    config: loadConfig({
      PORT: "0",
      SLACK_SIGNING_SECRET: signingSecret,
      SLACK_API_URL: emulator.apiUrl,
      SLACK_CLIENT_ID: emulator.clientId,
      ONAIR_SANDBOX: "1",
      SLACK_CLIENT_SECRET: emulator.clientSecret,
      SLACK_STATE_SECRET: stateSecret,
      STORE_URL: storeUrl.replace("{dir}", dir),
      ONAIR_ENCRYPTION_KEY: encryptionKey,
      LOG_LEVEL: "debug",
    }),
    logDestination: new Writable({
      write(chunk, _enc, cb) {
        logs.push(String(chunk));
        cb();
      },
    }),
    retryPolicy: "fast",
    host: "127.0.0.1",
    dataDir: dir,
    ...(namespace ? { storeNamespace: namespace } : {}),
  });
  emulator.setAppUrl(app.origin);
  return {
    app,
    emulator,
    logs,
    secrets: [signingSecret, stateSecret, encryptionKey, emulator.clientSecret],
    async close() {
      if (namespace) await app.store.deletePrefix("");
      await app.close();
      await emulator.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Keys that belong to `team`: by key, or by the team field of records keyed otherwise. */
async function keysOf(app: OnAirApp, team: string): Promise<string[]> {
  const rows = await app.store.entries<unknown>("");
  return rows
    .filter(
      ([k, v]) =>
        k.includes(team) ||
        (typeof v === "object" && v !== null && (v as { team?: unknown }).team === team),
    )
    .map(([k]) => k);
}

/** Outbox items are drained by the live worker whenever it runs, so they are not compared. */
const lasting = (keys: string[]) => keys.filter((k) => !k.startsWith("outbox:")).sort();

/** Every kind of record a team accumulates, through the app's own repositories. */
async function seed(app: OnAirApp, team: string, subId: string): Promise<void> {
  const s = app.store;
  await s.settings.put(team, {
    ...(await s.settings.getOrDefault(team)),
    eventsAppKey: "k",
    eventsAppSecret: "team-secret-value",
  });
  await s.users.put(team, USERS.omar, { email: "omar@example.com", userId: 7, enterpriseId: 1001 });
  await s.tokens.put(team, "enterprise", {
    accessToken: "tok-abcdef",
    expiresAt: Date.now() + 3_600_000,
    enterpriseId: 1001,
  });
  await s.events.put({
    team,
    eventId: `ev-${team}`,
    organizer: USERS.omar,
    subscriptions: [subId],
    cards: {},
    instances: {},
    createdAt: Date.now(),
  });
  // The once-only claims of a form submission and of a workflow step's run are the team's too.
  await s.claimOnce(submissionKey(team, { id: `V-${team}`, hash: "h1" }), 60_000);
  await s.claimOnce(stepRunKey(team, `Fx-${team}`), 60_000, { state: "done" });
  await s.subscriptions.put(subId, {
    team,
    eventId: `ev-${team}`,
    channels: [CHANNELS.events],
    secretSha256: hashWebhookSecret("webhook-secret"),
    types: ["EVENT_STATE"],
    noise: "digest",
    createdAt: Date.now(),
  });
  await s.outbox.put({ team, subscriptionId: subId, receivedAt: Date.now(), message: {} });
  await s.audit.append(team, { actor: USERS.omar, action: "event.schedule" });
}

/** Redis's own view of the namespace, without the app's code in between. */
async function redisKeysOf(url: string, namespace: string, team: string): Promise<string[]> {
  const client = createClient({ url });
  await client.connect();
  try {
    const found: string[] = [];
    for await (const batch of client.scanIterator({ MATCH: `${namespace}:*`, COUNT: 500 })) {
      for (const key of Array.isArray(batch) ? batch : [batch]) {
        const k = String(key);
        if (k.includes(team)) found.push(k);
        else if ((await client.get(k))?.includes(`"team":"${team}"`)) found.push(k);
      }
    }
    return found;
  } finally {
    await client.quit();
  }
}

const backends = [
  {
    name: "sqlite",
    url: "sqlite://{dir}/onair.sqlite" as string | undefined,
    namespace: undefined,
  },
  {
    name: "redis",
    url: REDIS,
    namespace: `core-uninstall-${randomUUID().slice(0, 8)}` as string | undefined,
  },
];

for (const backend of backends) {
  describe.skipIf(!backend.url && !REQUIRE)(`uninstall on ${backend.name}`, () => {
    let run: Run;
    beforeAll(async () => {
      if (!backend.url) throw new Error(`TEST_${backend.name.toUpperCase()}_URL is not set`);
      run = await start(backend.url, backend.namespace);
    });
    afterAll(async () => {
      await run?.close();
    });

    for (const order of ["app_uninstalled-first", "tokens_revoked-first"] as const) {
      it(`deletes every key of the team (${order}) and keeps other teams'`, async () => {
        const { app, emulator } = run;
        const installed = await emulator.driver.oauthInstall();
        expect(installed.callback.status).toBe(200);
        expect(await app.store.installations.get(TEAM)).toBeDefined();
        // A real listener writes too: linking through the app (with the sandbox's credentials).
        const since = emulator.calls.length;
        await emulator.driver.slashCommand({
          user: USERS.admin,
          channel: CHANNELS.general,
          text: "link",
        });
        await emulator.waitForCall((c) => c.method === "response_url", { since });
        expect(await app.store.users.get(TEAM, USERS.admin)).toBeDefined();
        const subId = `sub-${randomUUID()}`;
        await seed(app, TEAM, subId);
        await seed(app, OTHER, `sub-${randomUUID()}`);
        const before = await keysOf(app, TEAM);
        expect(before.length).toBeGreaterThanOrEqual(8);
        const otherBefore = lasting(await keysOf(app, OTHER));

        const results = await emulator.driver.uninstall({ order });
        expect(results.map((r) => r.status)).toEqual([200, 200]);

        await expect.poll(() => keysOf(app, TEAM), { timeout: 5_000 }).toEqual([]);
        expect(await app.store.subscriptions.get(subId)).toBeUndefined();
        expect(lasting(await keysOf(app, OTHER))).toEqual(otherBefore);
        if (backend.name === "redis" && backend.url && backend.namespace) {
          expect(await redisKeysOf(backend.url, backend.namespace, TEAM)).toEqual([]);
          const otherRaw = await redisKeysOf(backend.url, backend.namespace, OTHER);
          expect(lasting(otherRaw.map((k) => k.slice(backend.namespace!.length + 1)))).toEqual(
            otherBefore,
          );
        }

        // A later webhook for the team's subscription finds nothing and posts nothing.
        const after = emulator.calls.length;
        const hook = await fetch(`${app.origin}/webhooks/events/${subId}`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-onair-secret": "webhook-secret" },
          body: JSON.stringify({ type: "EVENT_STATE", eventId: `ev-${TEAM}`, state: "IN_EVENT" }),
        });
        expect(hook.status).toBeGreaterThanOrEqual(400);
        await new Promise((r) => setTimeout(r, 100));
        expect(emulator.calls.slice(after).filter((c) => c.method.startsWith("chat."))).toEqual([]);
      });
    }

    it("leaks no secret into logs or Slack calls", () => {
      const scan = createSecretScanner();
      for (const line of run.logs) scan.add("log", line);
      for (const c of run.emulator.calls) scan.add(`slack ${c.method}`, JSON.stringify(c));
      scan.assertNoSecrets([...run.secrets, "team-secret-value", "webhook-secret"]);
    });
  });
}
