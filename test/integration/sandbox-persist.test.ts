import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type SandboxServer, startSandboxServer } from "../../src/sandbox/index.ts";

const dir = mkdtempSync(join(tmpdir(), "onair-sandbox-persist-"));
const file = join(dir, "sandbox.json");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const JSON_HEADERS = { "content-type": "application/json", accept: "application/json" };

async function grant(server: SandboxServer, email: string) {
  const res = await fetch(`${server.eventsBaseUrl}/api/security/v1/oauth/accesstoken`, {
    method: "POST",
    headers: JSON_HEADERS,
    body: JSON.stringify({
      grant_type: "user_app",
      properties: { client_id: "sandbox-key", client_secret: "sandbox-secret", user_email: email },
    }),
  });
  expect(res.status).toBe(200);
  return (await res.json()) as { access_token: string; userId: number };
}

function eventPath(userId: number, id = "") {
  return `/api/scheduling/v1/users/${userId}/events${id ? `/${id}` : ""}`;
}

describe("the sandbox keeps its events in a file", () => {
  it("a restarted sandbox still has the event, its webhooks and who is present; old tokens are not kept", async () => {
    const first = await startSandboxServer({ stateFile: file });
    const g = await grant(first, "keeper@example.com");
    const auth = { ...JSON_HEADERS, authorization: `Bearer ${g.access_token}` };
    const start = Date.now() + 86_400_000;
    const created = await fetch(`${first.eventsBaseUrl}${eventPath(g.userId)}`, {
      method: "POST",
      headers: auth,
      body: JSON.stringify({ title: "Kept", start, end: start + 3_600_000, timezone: "UTC" }),
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const hook = await fetch(
      `${first.eventsBaseUrl}/api/webhook/v1/users/${g.userId}/events/${id}`,
      {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          type: ["EVENT_STATE"],
          url: "http://127.0.0.1:9/hook",
          method: "POST",
          headers: {},
        }),
      },
    );
    expect(hook.status).toBeLessThan(300);
    await first.sandbox.control.attendees(id, { join: [{ name: "Grace" }] });
    await first.close();
    // Readable by its owner only: the webhooks' headers are in it.
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(readFileSync(file, "utf8")).not.toContain(g.access_token);

    const second = await startSandboxServer({ stateFile: file });
    try {
      // The old token is unknown (a client re-grants after a 401); the event is not.
      const stale = await fetch(`${second.eventsBaseUrl}${eventPath(g.userId, id)}`, {
        headers: { accept: "application/json", authorization: `Bearer ${g.access_token}` },
      });
      expect(stale.status).toBe(401);
      const again = await grant(second, "keeper@example.com");
      expect(again.userId).toBe(g.userId);
      const got = await fetch(`${second.eventsBaseUrl}${eventPath(g.userId, id)}`, {
        headers: { accept: "application/json", authorization: `Bearer ${again.access_token}` },
      });
      expect(got.status).toBe(200);
      expect(await got.json()).toMatchObject({ id, title: "Kept", activeAttendeeCount: 1 });
      // The webhook is still registered: a state change is delivered (to nobody listening).
      const state = await second.sandbox.control.setState(id, { state: "PREP_EVENT" });
      expect(state.deliveries).toHaveLength(1);
    } finally {
      await second.close();
    }
  });

  it("a corrupt file starts the sandbox empty rather than not at all", async () => {
    const bad = join(dir, "bad.json");
    writeFileSync(bad, "{not json");
    const s = await startSandboxServer({ stateFile: bad });
    try {
      expect((await grant(s, "fresh@example.com")).userId).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });
});
