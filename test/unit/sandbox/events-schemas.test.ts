import { describe, expect, it } from "vitest";
import {
  EventCreate,
  EventEdit,
  TokenRequest,
  validate,
  WebhookRegistration,
} from "../../../src/sandbox/events-schemas.ts";

const event = { title: "Town hall", start: 1_000, end: 2_000 };
const hook = { type: ["EVENT_STATE"], method: "POST", url: "https://hooks.example.com/x" };

const reason = (r: ReturnType<typeof validate>) => (r.ok ? "accepted" : r.reason);

describe("the events sandbox's own schemas", () => {
  it("refuse with one reason naming the field and the rule broken (for the call log)", () => {
    expect(reason(validate(EventCreate, []))).toBe("must be a JSON object");
    expect(reason(validate(EventCreate, { start: 1, end: 2 }))).toBe("title: is required");
    expect(reason(validate(EventCreate, { ...event, title: 42 }))).toBe("title: must be a string");
    expect(reason(validate(EventCreate, { ...event, title: " " }))).toBe(
      "title: must not be empty",
    );
    expect(reason(validate(EventEdit, { enableQnaAnonymous: true }))).toBe(
      'Unrecognized key: "enableQnaAnonymous"',
    );
    expect(reason(validate(EventEdit, { panelists: [1] }))).toBe(
      "panelists.0: must be an e-mail string or an object",
    );
    expect(
      reason(
        validate(EventEdit, { recurrencePattern: { recurrenceType: "DAILY", frequency: "1" } }),
      ),
    ).toBe("recurrencePattern: ends either by recurrenceCount or by endDate, exactly one");
    expect(reason(validate(WebhookRegistration, { ...hook, url: "ftp://x" }))).toBe(
      "url: must be http or https",
    );
    expect(reason(validate(WebhookRegistration, { ...hook, headers: { Host: "x" } }))).toBe(
      "headers.Host: a framing header is not allowed",
    );
    expect(
      reason(
        validate(TokenRequest, {
          grant_type: "enterprise_app",
          properties: { client_id: "a", client_secret: "b", user_email: "a@example.com" },
        }),
      ),
    ).toBe('properties: Unrecognized key: "user_email"');
  });

  it("fill the spec's defaults: an edit takes only what it names, a pattern its zeros", () => {
    expect(validate(EventEdit, { title: "New" })).toEqual({ ok: true, data: { title: "New" } });
    const created = validate(EventCreate, {
      ...event,
      recurrencePattern: { recurrenceType: "DAILY", recurrenceCount: "5", frequency: "2" },
    });
    expect(created.ok && created.data.recurrencePattern).toEqual({
      recurrenceType: "DAILY",
      endDate: null,
      recurrenceCount: 5,
      frequency: 2,
      daysOfWeekMask: 0,
      dayOfMonth: 0,
      weekOfMonth: "NONE",
    });
    expect(
      validate(WebhookRegistration, { ...hook, type: ["EVENT_STATE", "EVENT_STATE"] }),
    ).toEqual({
      ok: true,
      data: { types: ["EVENT_STATE"], config: { url: hook.url, method: "POST", headers: {} } },
    });
  });
});
