import type { Directory } from "../../src/domain/directory.ts";
import { scheduleEvent } from "../../src/domain/schedule.ts";
import { CHANNELS, startBenchApp, TEAM, USERS } from "../harness/app.ts";
import { seedEvent } from "../harness/seed.ts";
import type { Row } from "../harness/table.ts";

/**
 * What one schedule with a channel costs (issue 25): the calls to the events service and the
 * reads and writes of the event record and the subscription, counted around the domain action
 * on the real app (sandbox upstream, SQLite store). The goal is create + 1 GET upstream (beside
 * the webhook registration), and 1 write of the record + 1 of the subscription.
 */

function counting<T extends object>(target: T, label: string, counts: Map<string, number>): void {
  for (const key of Object.keys(target) as Array<keyof T>) {
    const fn = target[key];
    if (typeof fn !== "function") continue;
    target[key] = (async (...args: unknown[]) => {
      const name = `${label}.${String(key)}`;
      counts.set(name, (counts.get(name) ?? 0) + 1);
      return (fn as (...a: unknown[]) => Promise<unknown>).apply(target, args);
    }) as T[keyof T];
  }
}

const directory: Directory = {
  profile: async (id) => ({ id, email: undefined, tz: "Europe/Berlin", isAdmin: true, name: id }),
  groupMembers: async () => [],
  userByEmail: async () => undefined,
  isChannelMember: async () => true,
  appReach: async () => "ok",
};

export async function liveScheduleCostRows(rows: Row[]): Promise<void> {
  const h = await startBenchApp();
  try {
    const deps = h.app.deps;
    // Links the organizer (the schedule form requires a linked account).
    await seedEvent(h, "warm-up");
    const counts = new Map<string, number>();
    counting(deps.events as object, "upstream", counts);
    counting(deps.store.events as object, "record", counts);
    counting(deps.store.subscriptions as object, "subscription", counts);
    const start = Date.now() + 3 * 3600_000;
    await scheduleEvent(
      deps,
      { team: TEAM, user: USERS.omar, directory },
      {
        title: "Bench schedule",
        start,
        end: start + 3600_000,
        timezone: "UTC",
        recurrence: "NONE",
        channel: CHANNELS.general,
      },
      CHANNELS.general,
    );
    const sum = (prefix: string, verbs: string[]) =>
      [...counts]
        .filter(([k]) => k.startsWith(prefix) && verbs.some((v) => k.endsWith(`.${v}`)))
        .reduce((n, [, c]) => n + c, 0);
    const upstream = [...counts]
      .filter(([k]) => k.startsWith("upstream."))
      .map(([k, c]) => `${k.slice(9)}×${c}`)
      .join(", ");
    const gets = counts.get("upstream.getEvent") ?? 0;
    const recordWrites = sum("record.", ["put", "delete"]);
    const subWrites = sum("subscription.", ["put", "delete"]);
    const reads = sum("record.", ["get", "list"]) + sum("subscription.", ["get", "list"]);
    rows.push({
      measure: "One schedule with a channel: upstream calls",
      figure: upstream,
      baseline: "create + 1 GET (+ the webhook)",
      ratio: `${gets} GET`,
      bar: "",
      met: gets <= 1,
    });
    rows.push({
      measure: "One schedule with a channel: store writes (record + subscription), reads",
      figure: `${recordWrites} + ${subWrites} writes, ${reads} reads`,
      baseline: "1 + 1 writes",
      ratio: "",
      bar: "",
      met: recordWrites <= 1 && subWrites <= 1,
    });
  } finally {
    await h.close();
  }
}
