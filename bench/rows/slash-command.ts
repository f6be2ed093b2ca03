/** Slash command ack at 100/s, beside a bare server that verifies the signature and acks. */
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import { startBenchApp } from "../harness/app.ts";
import { type LoadResult, listen, load } from "../harness/measure.ts";
import { fmt, type Row } from "../harness/table.ts";

export async function slashCommandRows(rows: Row[]): Promise<void> {
  const h = await startBenchApp();
  const secret = h.signingSecret;
  const bare = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString();
      const ts = String(req.headers["x-slack-request-timestamp"]);
      const want = Buffer.from(
        `v0=${createHmac("sha256", secret).update(`v0:${ts}:${raw}`).digest("hex")}`,
      );
      const got = Buffer.from(String(req.headers["x-slack-signature"]));
      res.writeHead(want.length === got.length && timingSafeEqual(want, got) ? 200 : 401).end();
    });
  });
  const bareUrl = await listen(bare);
  try {
    const plan = { kind: "slash", count: 500, rate: 100, signingSecret: secret };
    // Both servers first take 100 commands unmeasured, so the figure is the steady state and
    // not the first compilation of Bolt's and the router's code paths.
    const warm = { ...plan, count: 100 };
    await load({ ...warm, url: `${bareUrl}/slack/events` });
    const base = await load({ ...plan, url: `${bareUrl}/slack/events` });
    await load({ ...warm, url: `${h.app.origin}/slack/events` });
    // Three rounds: on a shared machine one round's p99 is one stall away from another figure.
    const rounds: LoadResult[] = [];
    for (let i = 0; i < 3; i++)
      rounds.push(await load({ ...plan, url: `${h.app.origin}/slack/events` }));
    const p99s = rounds.map((r) => r.p99).sort((a, b) => a - b);
    const median = p99s[1] ?? Number.NaN;
    const failed = rounds.reduce((n, r) => n + r.failed, 0);
    rows.push({
      measure: "slash command ack p99 at 100/s: median of 3 × 500, after 100 warm-up (ms)",
      figure: `${fmt(median)} (rounds ${p99s.map((p) => fmt(p)).join(" / ")}; p50 ${fmt(rounds[0]?.p50 ?? Number.NaN)}; ${failed} failed)`,
      baseline: fmt(base.p99),
      ratio: fmt(median / base.p99, 2),
      bar: "≤ 30 ms",
      met: median <= 30 && failed === 0,
    });
  } finally {
    bare.close();
    await h.close();
  }
}
