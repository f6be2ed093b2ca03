/** Time from `/onair schedule` being sent to the emulator receiving views.open. */
import { CHANNELS, startBenchApp, USERS } from "../harness/app.ts";
import { percentile } from "../harness/measure.ts";
import { fmt, type Row } from "../harness/table.ts";

export async function viewsOpenRows(rows: Row[]): Promise<void> {
  const h = await startBenchApp();
  try {
    const acks: number[] = [];
    const opens: number[] = [];
    for (let i = 0; i < 40; i++) {
      const since = h.emulator.calls.length;
      const t0 = Date.now();
      await h.driver.slashCommand({
        user: USERS.omar,
        channel: CHANNELS.general,
        text: "schedule",
      });
      acks.push(Date.now() - t0);
      const open = await h.emulator.waitForCall((c) => c.method === "views.open", {
        since,
        timeoutMs: 5_000,
      });
      opens.push(open.time - t0);
      // The form fills in by views.update; let it land before closing the modal.
      await h.emulator.waitForCall((c) => c.method === "views.update", { since, timeoutMs: 5_000 });
      await h.driver.viewClosed({ user: USERS.omar });
    }
    acks.sort((a, b) => a - b);
    opens.sort((a, b) => a - b);
    const p99 = percentile(opens, 99);
    rows.push({
      measure: "/onair schedule → views.open p99, 40 sequential (ms)",
      figure: `${fmt(p99, 0)} (p50 ${fmt(percentile(opens, 50), 0)})`,
      baseline: `ack p99 ${fmt(percentile(acks, 99), 0)}`,
      ratio: fmt(p99 / percentile(acks, 99), 2),
      bar: "≤ 200 ms",
      met: p99 <= 200,
    });
  } finally {
    await h.close();
  }
}
