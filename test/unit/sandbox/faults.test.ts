import { describe, expect, it } from "vitest";
import { SandboxControlError } from "../../../src/sandbox/errors.ts";
import { FaultQueue, faultReply, parseFault, relayErrorBody } from "../../../src/sandbox/faults.ts";
import { RELAY_ERROR_CATALOG, RELAY_ERROR_NAMES } from "../../../src/upstream/relay/catalog.ts";

describe("sandbox faults", () => {
  it("every catalog error body has exactly the catalog's keys, all filled", () => {
    expect(RELAY_ERROR_NAMES).toHaveLength(38);
    for (const name of RELAY_ERROR_NAMES) {
      const entry = RELAY_ERROR_CATALOG[name];
      const body = relayErrorBody(name);
      expect(body.errorCode).toBe(entry.errorCode);
      expect(body.errorMessage).toBe(entry.meaning);
      if (entry.detailsKeys === null) {
        expect(body.errorDetails).toBeNull();
        continue;
      }
      expect(Object.keys(body.errorDetails ?? {}).sort()).toEqual([...entry.detailsKeys].sort());
      for (const k of entry.detailsKeys) {
        // `cause` is the one key whose plausible value is null (no nested exception).
        if (k !== "cause") expect(body.errorDetails?.[k] ?? null).not.toBeNull();
      }
    }
  });

  it("given details win over samples; auth errors echo message and code", () => {
    const body = relayErrorBody("Invalid", "bad roles", { cause: "POST /x" });
    expect(body.errorDetails).toEqual({ message: "bad roles", cause: "POST /x" });
    expect(relayErrorBody("NotAuthenticated", "who?").errorDetails).toEqual({
      errorMessage: "who?",
      errorCode: RELAY_ERROR_CATALOG.NotAuthenticated.errorCode,
    });
  });

  it("a status overrides the catalog's; a status alone picks the first catalog error with it", () => {
    const overridden = faultReply(parseFault({ service: "relay", error: "NotFound", status: 410 }));
    expect(overridden?.status).toBe(410);
    expect((overridden!.json as { errorName: string }).errorName).toBe("NotFound");
    const byStatus = faultReply(parseFault({ service: "relay", status: 401 }));
    expect((byStatus!.json as { errorName: string }).errorName).toBe("BadCredentialsException");
    expect(faultReply(parseFault({ service: "events", status: 502 }))).toEqual({ status: 502 });
    expect(faultReply(parseFault({ service: "events", delayMs: 5 }))).toBeUndefined();
  });

  it("the queue serves faults first in, first out, per service, `times` each", () => {
    const q = new FaultQueue();
    q.add(parseFault({ service: "relay", status: 500, times: 2 }));
    q.add(parseFault({ service: "events", status: 503 }));
    q.add(parseFault({ service: "relay", status: 502 }));
    expect(q.take("events")?.status).toBe(503);
    expect(q.take("events")).toBeUndefined();
    expect([q.take("relay")?.status, q.take("relay")?.status, q.take("relay")?.status]).toEqual([
      500, 500, 502,
    ]);
    expect(q.take("relay")).toBeUndefined();
  });

  it.each([
    [null],
    [{ service: "relay", error: "Nope" }],
    [{ service: "events", error: "NotFound" }],
    [{ service: "relay", status: 99 }],
    [{ service: "relay", status: 500, delayMs: -1 }],
    [{ service: "relay", status: 500, times: 1.5 }],
    [{ service: "relay", status: 500, extra: true }],
  ])("parseFault refuses %j", (input) => {
    expect(() => parseFault(input)).toThrow(SandboxControlError);
  });
});
