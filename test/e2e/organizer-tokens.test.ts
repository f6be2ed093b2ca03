import type { CallRecord } from "@onair/slack-emulator";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { TOKEN_FIELDS as T, VIEWS } from "../../src/ids.ts";
import { RELAY_ERROR_CATALOG, type RelayErrorName } from "../../src/upstream/relay/catalog.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { createSecretScanner } from "../helpers/secrets.ts";
import { commandOpensModal, expectAllPayloadsValid, viewOf, waitFor } from "./organizer-helpers.ts";

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
  const s = await h.app.store.settings.getOrDefault(TEAM);
  await h.app.store.settings.put(TEAM, { ...s, auditChannel: CHANNELS.audit });
});
afterAll(async () => {
  await h?.close();
});

const DAY = 86_400_000;
const minted: string[] = [];

/** The modal update that shows a minted token (only its requester sees the modal). */
function isTokenModal(c: CallRecord): boolean {
  return (
    c.method === "views.update" && JSON.stringify(c.args.view).includes("Here is your relay token")
  );
}

/**
 * Opens /onair token as the admin, submits, and returns the modal that shows the token: the form
 * turns into "Minting…", then into the token itself, in the requester's own modal.
 */
async function mint(values: Record<string, unknown>, channel: string = CHANNELS.general) {
  await commandOpensModal(h, USERS.admin, channel, "token", VIEWS.token);
  const since = h.emulator.calls.length;
  h.sandbox.control.clearLog();
  const res = await h.driver.viewSubmission({ user: USERS.admin, values: values as never });
  expect(res.outcome.action).toBe("updated");
  const call = await waitFor(h, isTokenModal, since);
  const blocks = JSON.stringify(viewOf(call).blocks);
  const token = /```([^`]+)```/.exec(blocks)?.[1] ?? "";
  expect(token.length).toBeGreaterThan(8);
  minted.push(token);
  const expiry = /<!date\^(\d+)\^/.exec(blocks)?.[1];
  const query =
    h.sandbox.control.log().find((e) => e.service === "relay" && e.method === "POST")?.query ?? {};
  return {
    call,
    token,
    expiryMs: expiry ? Number(expiry) * 1000 : null,
    query,
    text: blocks,
  };
}

function near(actual: number | null, expected: number) {
  expect(actual).not.toBeNull();
  // The relay's clock and ours differ by the round trip; a minute is far beyond it.
  expect(Math.abs((actual ?? 0) - expected)).toBeLessThan(60_000);
}

describe("/onair token", () => {
  it("offers read only preselected and the durations the policy allows (no 'never' by default)", async () => {
    const call = await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
    const blocks = viewOf(call).blocks as Array<{
      block_id?: string;
      element?: Record<string, unknown>;
    }>;
    const el = (id: string) => blocks.find((b) => b.block_id === id)?.element ?? {};
    // One role preselected, the least a token can do.
    expect((el(T.roles).initial_options as Array<{ value: string }>).map((o) => o.value)).toEqual([
      "ROLE_READONLY",
    ]);
    const durations = (el(T.duration).options as Array<{ value: string }>).map((o) => o.value);
    expect(durations).toEqual(["day", "twoWeeks", "custom"]);
    await h.driver.viewClosed({ user: USERS.admin });
  });

  it("2 weeks: the relay's default validity, shown once to the requester", async () => {
    const m = await mint({ [T.duration]: "twoWeeks", [T.clientName]: "Lobby display" });
    expect(m.query.duration).toBeUndefined();
    near(m.expiryMs, Date.now() + 14 * DAY);
    expect((viewOf(m.call).title as { text: string }).text).toBe("Your relay token");
    expect(m.text).toContain("relay's admin page");
  });

  it("from a private channel the bot is not in: shown once, to the requester only", async () => {
    // Real Slack answers channel_not_found to a post or an ephemeral there, and the emulator
    // does too: the token must not depend on the channel the command was typed in.
    const since = h.emulator.calls.length;
    const m = await mint(
      { [T.duration]: "day", [T.clientName]: "Planning kiosk" },
      CHANNELS.planning,
    );
    const carrying = h.emulator.calls
      .slice(since)
      .filter((c) => JSON.stringify(c.args).includes(m.token));
    expect(carrying).toHaveLength(1);
    expect(isTokenModal(carrying[0] as CallRecord)).toBe(true);
    const failed = h.emulator.calls.slice(since).filter((c) => !c.ok);
    expect(failed.map((c) => `${c.method}: ${c.error}`)).toEqual([]);
  });

  it("1 day", async () => {
    const m = await mint({ [T.duration]: "day" });
    expect(m.query.duration).toBe(String(DAY));
    near(m.expiryMs, Date.now() + DAY);
  });

  it("custom hours", async () => {
    const m = await mint({
      [T.duration]: "custom",
      [T.customHours]: "5",
      [T.roles]: ["ROLE_READONLY"],
    });
    expect(m.query.duration).toBe(String(5 * 3_600_000));
    expect(m.query.roles).toBe("ROLE_READONLY");
    near(m.expiryMs, Date.now() + 5 * 3_600_000);
  });

  it("zero-touch pairing: the user's events token as meetingaccesstoken, valid 1 day", async () => {
    const m = await mint({ [T.duration]: "twoWeeks", [T.pairingCode]: "PAIR-42" });
    // The sandbox's log redacts the code; that it was sent is what counts here.
    expect(m.query.code).toBeDefined();
    expect(m.query.meetingaccesstoken).toBeDefined();
    near(m.expiryMs, Date.now() + DAY);
  });

  it("never: null expiry, offered only when the policy has no ceiling", async () => {
    const s = await h.app.store.settings.getOrDefault(TEAM);
    await h.app.store.settings.put(TEAM, { ...s, longestTokenMs: Number.MAX_SAFE_INTEGER });
    try {
      const m = await mint({ [T.duration]: "never" });
      expect(m.query.duration).toBe("-1");
      expect(m.expiryMs).toBeNull();
      expect(m.text).toContain("never expires");
    } finally {
      await h.app.store.settings.put(TEAM, s);
    }
  });

  it("checks the custom duration against the policy inline", async () => {
    await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
    const missing = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [T.duration]: "custom" },
    });
    expect(missing.outcome).toMatchObject({
      action: "errors",
      errors: { [T.customHours]: expect.stringMatching(/how many hours/) },
    });
    const tooLong = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [T.duration]: "custom", [T.customHours]: "400" },
    });
    expect(tooLong.outcome).toMatchObject({
      action: "errors",
      errors: { [T.customHours]: expect.stringMatching(/longer than/) },
    });
    const noRoles = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [T.duration]: "day", [T.roles]: [] },
      clientValidation: false,
    });
    expect(noRoles.outcome).toMatchObject({
      action: "errors",
      errors: { [T.roles]: expect.any(String) },
    });
    await h.driver.viewClosed({ user: USERS.admin });
  });

  it("refuses a member the mint policy leaves out", async () => {
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.member, channel: CHANNELS.general, text: "token" });
    const call = await waitFor(h, (c) => c.method === "views.update", since);
    expect(viewOf(call).callback_id).not.toBe(VIEWS.token);
    expect(JSON.stringify(viewOf(call).blocks)).toContain(
      "only workspace admins may mint relay tokens",
    );
    await h.driver.viewClosed({ user: USERS.member });
  });

  it("audits who, client name, roles and expiry, in the store and the audit channel, never the token", async () => {
    await vi.waitFor(async () => {
      const audit = (await h.app.store.audit.list(TEAM)).filter(
        (a) => a.entry.action === "token.mint",
      );
      expect(audit.length).toBe(minted.length);
    });
    const audit = (await h.app.store.audit.list(TEAM)).filter(
      (a) => a.entry.action === "token.mint",
    );
    const lobby = audit.find((a) => a.entry.details?.clientName === "Lobby display");
    expect(lobby?.entry).toMatchObject({
      actor: USERS.admin,
      details: {
        // The form's default: read only.
        roles: "ROLE_READONLY",
      },
    });
    expect(typeof lobby?.entry.details?.expiresAt).toBe("number");
    const posts = h.emulator.calls.filter(
      (c) => c.method === "chat.postMessage" && c.args.channel === CHANNELS.audit,
    );
    const line = posts
      .map((c) => String(c.args.text))
      .find((t) => /Lobby display/.test(t) && /ROLE_READONLY/.test(t));
    expect(line).toBeDefined();
    // The expiry as a Slack date (each reader sees it in their zone), never a raw ISO time.
    expect(line).toMatch(/expires <!date\^\d+\^[^|>]+\|[^>]+>/);
    expect(line).not.toMatch(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/);
  });
});

describe("/onair tokens", () => {
  it("lists live tokens masked to their last 4 characters", async () => {
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({ user: USERS.admin, channel: CHANNELS.general, text: "tokens" });
    const call = await waitFor(h, (c) => c.method === "response_url", since);
    const text = JSON.stringify(call.args.blocks);
    for (const t of minted) {
      expect(text).toContain(`••••${t.slice(-4)}`);
      expect(text).not.toContain(t);
    }
    expect(text).toContain("Lobby display");
    expect(text).toContain("relay's admin page");
  });

  it("every relay catalog error reads as its own plain message", async () => {
    const seen = new Set<string>();
    for (const name of Object.keys(RELAY_ERROR_CATALOG) as RelayErrorName[]) {
      h.sandbox.control.addFault({ service: "relay", error: name, times: 10 });
      const since = h.emulator.calls.length;
      await h.driver.slashCommand({ user: USERS.admin, channel: CHANNELS.general, text: "tokens" });
      const call: CallRecord = await waitFor(h, (c) => c.method === "response_url", since);
      h.sandbox.control.clearFaults();
      expect(call.args.text, name).toBe(
        `${RELAY_ERROR_CATALOG[name].userMessage} (Relay error: ${name}.)`,
      );
      seen.add(String(call.args.text));
    }
    expect(seen.size).toBe(Object.keys(RELAY_ERROR_CATALOG).length);
  });

  it("a relay error while minting reaches the requester in plain words", async () => {
    await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
    h.sandbox.control.addFault({ service: "relay", error: "BadCredentialsException", times: 10 });
    const since = h.emulator.calls.length;
    await h.driver.viewSubmission({ user: USERS.admin, values: { [T.duration]: "day" } });
    const call = await waitFor(
      h,
      (c) =>
        c.method === "views.update" &&
        JSON.stringify(viewOf(c).blocks).includes(
          RELAY_ERROR_CATALOG.BadCredentialsException.userMessage,
        ),
      since,
    );
    h.sandbox.control.clearFaults();
    expect(viewOf(call).callback_id).not.toBe(VIEWS.token);
  });
});

describe("secrets", () => {
  it("each token is in exactly one Slack call and nowhere in logs, audit or the raw store", async () => {
    expect(minted.length).toBe(6);
    const raw = JSON.stringify(await h.app.store.entries(""));
    const audit = JSON.stringify(await h.app.store.audit.list(TEAM, 1000));
    for (const t of minted) {
      const carrying = h.emulator.calls.filter((c) => JSON.stringify(c.args).includes(t));
      expect(carrying.map((c) => c.method)).toEqual(["views.update"]);
      expect(carrying.every(isTokenModal)).toBe(true);
      expect(h.logs.some((l) => l.includes(t))).toBe(false);
      expect(audit).not.toContain(t);
      expect(raw).not.toContain(t);
    }
    const scan = createSecretScanner();
    for (const line of h.logs) scan.add("log", line);
    scan.assertNoSecrets([...h.secrets, "sandbox-secret", ...minted]);
    expectAllPayloadsValid(h);
  });
});

describe("/onair token, the modal closed before the token came", () => {
  it("modal closed before the token came: it goes to the requester's DM, never in a notification's text", async () => {
    await commandOpensModal(h, USERS.admin, CHANNELS.general, "token", VIEWS.token);
    const since = h.emulator.calls.length;
    // The relay answers late; the requester closes the "Minting…" modal meanwhile.
    h.sandbox.control.addFault({ service: "relay", delayMs: 1_500, times: 1 });
    const res = await h.driver.viewSubmission({
      user: USERS.admin,
      values: { [T.duration]: "day", [T.clientName]: "Closed too soon" } as never,
    });
    expect(res.outcome.action).toBe("updated");
    await h.driver.viewClosed({ user: USERS.admin });
    const dm = await waitFor(
      h,
      (c) => c.method === "chat.postMessage" && c.ok && c.args.channel === USERS.admin,
      since,
    );
    const token = /```([^`]+)```/.exec(JSON.stringify(dm.args.blocks))?.[1] ?? "";
    expect(token.length).toBeGreaterThan(8);
    // Notifications, their previews and unread-message e-mails show `text`: no token there.
    expect(String(dm.args.text)).toContain("Here is your relay token for Closed too soon");
    expect(String(dm.args.text)).not.toContain(token);
    // The modal's update failed (closed), then the DM: only the requester's, and nowhere else.
    const carrying = h.emulator.calls.filter((c) => JSON.stringify(c.args).includes(token));
    expect(carrying.map((c) => `${c.method} ${c.ok}`)).toEqual([
      "views.update false",
      "chat.postMessage true",
    ]);
    expect(h.logs.some((l) => l.includes(token))).toBe(false);
    expect(JSON.stringify(await h.app.store.audit.list(TEAM, 1000))).not.toContain(token);
    expect(JSON.stringify(await h.app.store.entries(""))).not.toContain(token);
  });
});
