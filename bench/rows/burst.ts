/**
 * Attendee bursts through the sandbox's control API with Slack's per-channel pace on: exact
 * counts, calls per second per channel, 429s, time to the final digest and card, the app's RSS
 * (the app in a child process of its own).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type SlackEmulator, startSlackEmulator } from "@onair/slack-emulator";
import { startSandboxServer } from "../../src/sandbox/index.ts";
import { botScopes } from "../../src/slack/scopes.ts";
import { createCipher, openStore } from "../../src/store/index.ts";
import { CHANNELS, USERS } from "../harness/app.ts";
import { type ChildApp, childAppEnv, spawnApp } from "../harness/children.ts";
import { maxPerSecond, processRss, sleep } from "../harness/measure.ts";
import { digestTotals, seedExternal } from "../harness/seed.ts";
import { fmt, type Row } from "../harness/table.ts";

interface BurstSpec {
  /** Row labels start with this. */
  label: string;
  joins: number;
  leaves: number;
  seconds: number;
  ticks: number;
}

const BURST: BurstSpec = {
  label: "attendee burst",
  joins: 10_000,
  leaves: 2_000,
  seconds: 10,
  ticks: 20,
};
/** Issue 13's bigger event: a 50,000-attendee town hall. */
const BIG_EVENT: BurstSpec = {
  label: "50,000-attendee event",
  joins: 50_000,
  leaves: 10_000,
  seconds: 30,
  // Whole joins and leaves per tick: 1,000 and 200 every 0.6 s.
  ticks: 50,
};

/**
 * 10,000 JOIN + 2,000 LEFT in 10 s through the sandbox's control API, with Slack's per-channel
 * pace on: calls per second per channel, 429s, exact counts, time to the final digest, RSS.
 */
export async function attendeeBurstRows(rows: Row[]): Promise<void> {
  await burstRows(rows, BURST);
}

/** 50,000 JOIN + 10,000 LEFT in 30 s for one event, the same figures. */
export async function bigEventRows(rows: Row[]): Promise<void> {
  await burstRows(rows, BIG_EVENT);
}

const COMPILED = process.env.BENCH_COMPILED === "1";

async function burstRows(rows: Row[], BURST: BurstSpec): Promise<void> {
  // The app runs in a child process of its own (harness/child.ts), so its RSS is the app's
  // alone; the emulator and the sandbox stay here.
  const signingSecret = randomBytes(16).toString("hex");
  const key = randomBytes(32);
  const emulator = await startSlackEmulator({ signingSecret, seed: { botScopes: botScopes() } });
  const sandbox = await startSandboxServer();
  const dir = mkdtempSync(join(tmpdir(), "onair-burst-"));
  const storeUrl = `sqlite://${join(dir, "burst.sqlite")}`;
  let child: ChildApp | undefined;
  const title = `Town hall burst (${BURST.joins})`;
  try {
    const store = await openStore(storeUrl, { cipher: createCipher(key) });
    const event = await seedExternal(store, { eventsBaseUrl: sandbox.eventsBaseUrl, title });
    await store.close();
    child = await spawnApp(
      {
        ...childAppEnv({ signingSecret, emulator, sandbox, storeUrl, key }),
        // BENCH_LIVE_ENGINE=inline runs the engine on the app's event loop, for comparison.
        ...(process.env.BENCH_LIVE_ENGINE
          ? { BENCH_LIVE_ENGINE: process.env.BENCH_LIVE_ENGINE }
          : {}),
      },
      // BENCH_COMPILED=1 runs the production build (npm run build first), as deployed.
      { compiled: COMPILED },
    );
    emulator.setAppUrl(child.origin);
    const h = { emulator, logs: child.output };
    const pid = child.proc.pid ?? 0;
    const channel = CHANNELS.townHall;
    await emulator.driver.slashCommand({
      user: USERS.omar,
      channel,
      text: `notify ${event.eventId} <#${channel}|town-hall>`,
      // Already in the form Slack sends (should_escape), not as typed.
      escaped: true,
    });
    const card = await waitForCard(emulator, channel, title);
    const control = sandbox.sandbox.control;
    await control.setState(event.eventId, { state: "IN_EVENT" });
    const target = { eventId: event.eventId };
    h.emulator.setRateLimit({
      perChannelPerSec: 1,
      burst: 1,
      methods: ["chat.postMessage", "chat.update"],
    });
    const since = h.emulator.calls.length;
    const rssBefore = processRss(pid);
    let burstPeakRss = rssBefore;
    const burstRss = setInterval(() => {
      burstPeakRss = Math.max(burstPeakRss, processRss(pid));
    }, 50);
    const tickMs = (BURST.seconds * 1000) / BURST.ticks;
    const perTickJoin = BURST.joins / BURST.ticks;
    const perTickLeave = BURST.leaves / BURST.ticks;
    let delivered = 0;
    let failed = 0;
    const t0 = Date.now();
    for (let i = 0; i < BURST.ticks; i++) {
      const due = t0 + i * tickMs;
      if (due > Date.now()) await sleep(due - Date.now());
      // Half-way, Slack throttles the channel on top of its pace: a 429 storm to ride out.
      if (i === BURST.ticks / 2) h.emulator.throttle({ channel, times: 3, retryAfterSec: 1 });
      const j = await control.attendees(target.eventId, { count: perTickJoin, concurrency: 16 });
      const l = await control.attendees(target.eventId, {
        leave: j.joined.slice(0, perTickLeave).map((a) => a.endpointGuid),
        concurrency: 16,
      });
      delivered += j.delivered + l.delivered;
      failed += j.failed + l.failed;
    }
    const burstEnd = Date.now();
    const burstMs = burstEnd - t0;
    const thread = () =>
      h.emulator.workspace
        .replies(channel, card)
        .filter((m) => m.ts !== card)
        .map((m) => m.text ?? "");
    const cardText = () =>
      JSON.stringify(
        h.emulator.workspace.topLevel(channel).find((m) => m.ts === card)?.blocks ?? "",
      );
    const presentNow = () => Number(/Attendees now \*(\d+)\*/.exec(cardText())?.[1] ?? -1);
    let totals = digestTotals(thread());
    const until = Date.now() + 60_000;
    while (
      (totals.joined < BURST.joins ||
        totals.left < BURST.leaves ||
        presentNow() !== BURST.joins - BURST.leaves) &&
      Date.now() < until
    ) {
      await sleep(100);
      totals = digestTotals(thread());
    }
    clearInterval(burstRss);
    const calls = h.emulator.calls.slice(since).filter((c) => c.args.channel === channel);
    // The final digest and the card update that completed the figures: the last successful
    // post into the thread and the last update of the card.
    const lastDigest = calls
      .filter((c) => c.ok && c.method === "chat.postMessage" && c.args.thread_ts === card)
      .at(-1);
    const lastCard = calls.filter((c) => c.ok && c.method === "chat.update").at(-1);
    const toDigest = lastDigest ? lastDigest.time - burstEnd : Number.NaN;
    const toCard = lastCard ? lastCard.time - burstEnd : Number.NaN;
    const present = presentNow();
    const throttled = calls.filter((c) => c.status === 429).length;
    const okCalls = calls.filter((c) => c.ok).map((c) => c.time);
    const perSec = maxPerSecond(okCalls);
    const allCalls = maxPerSecond(calls.map((c) => c.time));
    const lost = h.logs.filter((l) => /"level":(50|60)/.test(l)).length;
    const exact =
      totals.joined === BURST.joins &&
      totals.left === BURST.leaves &&
      present === BURST.joins - BURST.leaves;
    rows.push({
      measure: `${BURST.label}: ${BURST.joins} JOIN + ${BURST.leaves} LEFT in ${fmt(burstMs / 1000)} s (${delivered} delivered, ${failed} failed)`,
      figure: `digests ${totals.joined} / ${totals.left}, card ${present} present`,
      baseline: `${BURST.joins} / ${BURST.leaves} / ${BURST.joins - BURST.leaves}`,
      ratio: exact ? "1.00" : "off",
      bar: "exact counts",
      met: exact && failed === 0,
    });
    rows.push({
      measure: `${BURST.label}: Slack calls/s on the channel, max over any 1 s`,
      figure: `${perSec} accepted (${allCalls} tried; ${throttled} × 429, ${lost} errors logged)`,
      baseline: "pace 1/s (emulator limit)",
      ratio: fmt(perSec / 1, 2),
      bar: "≈ 1/s; no 429 unhandled",
      met: perSec <= 2 && lost === 0 && exact,
    });
    rows.push({
      measure: `${BURST.label}: burst end → final digest / final card (ms)`,
      figure: `${fmt(toDigest, 0)} / ${fmt(toCard, 0)}`,
      baseline: `burst lasted ${fmt(burstMs, 0)}`,
      ratio: fmt(Math.max(toDigest, toCard) / burstMs, 2),
      bar: "≤ 15,000 ms",
      met: Math.max(toDigest, toCard) <= 15_000,
    });
    rows.push({
      measure: `${BURST.label}: peak RSS of the app process (MB${COMPILED ? ", node dist/main.js" : ", through tsx"})`,
      figure: fmt(burstPeakRss / 2 ** 20, 0),
      baseline: `${fmt(rssBefore / 2 ** 20, 0)} before the burst`,
      ratio: fmt(burstPeakRss / rssBefore, 2),
      bar: "< 250 MB",
      met: burstPeakRss < 250 * 2 ** 20,
    });
  } finally {
    await child?.stop();
    await emulator.close();
    await sandbox.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function waitForCard(
  emulator: SlackEmulator,
  channel: string,
  title: string,
): Promise<string> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    const ts = emulator.workspace
      .topLevel(channel)
      .find((m) => JSON.stringify(m.blocks ?? "").includes(title))?.ts;
    if (ts) return ts;
    await sleep(50);
  }
  throw new Error("the card was not posted");
}
