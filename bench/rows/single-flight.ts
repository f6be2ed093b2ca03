/** Token grants under 200 concurrent commands on a cold cache: single-flight against naive. */
import { SANDBOX_SEEDS, startSandboxServer } from "../../src/sandbox/index.ts";
import { createEventsClient } from "../../src/upstream/events/client.ts";
import { createTokenManager } from "../../src/upstream/events/tokens.ts";
import { createHttp } from "../../src/upstream/http.ts";
import { TEAM } from "../harness/app.ts";
import { fmt, type Row } from "../harness/table.ts";

export async function singleFlightRows(rows: Row[]): Promise<void> {
  const sb = await startSandboxServer();
  try {
    const http = createHttp();
    const events = createEventsClient({ baseUrl: sb.eventsBaseUrl, http });
    const creds = {
      clientId: SANDBOX_SEEDS.events.clientId,
      clientSecret: SANDBOX_SEEDS.events.clientSecret,
    };
    const grants = () =>
      sb.sandbox.control.log().filter((e) => e.path.endsWith("/oauth/accesstoken")).length;
    let t0 = performance.now();
    await Promise.all(
      Array.from({ length: 200 }, () =>
        events.grantUserApp({ ...creds, email: "omar@example.com" }),
      ),
    );
    const naiveMs = performance.now() - t0;
    const naive = grants();
    sb.sandbox.control.clearLog();
    const tokens = createTokenManager({ events });
    t0 = performance.now();
    await Promise.all(
      Array.from({ length: 200 }, () => tokens.userToken(TEAM, "omar@example.com", creds)),
    );
    const sfMs = performance.now() - t0;
    const sf = grants();
    rows.push({
      measure: "token grants for 200 concurrent commands, cold cache",
      figure: `${sf} grant (${fmt(sfMs)} ms)`,
      baseline: `${naive} grants (${fmt(naiveMs)} ms)`,
      ratio: fmt(sf / naive, 3),
      bar: "1 grant",
      met: sf === 1,
    });
    await http.close();
  } finally {
    await sb.close();
  }
}
