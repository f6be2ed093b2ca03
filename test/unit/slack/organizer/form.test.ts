import { describe, expect, it } from "vitest";
import { draftErrorsToBlocks, readEventForm } from "../../../../src/blocks/event-form-read.ts";
import type { ViewStateValues } from "../../../../src/blocks/view-state.ts";
import {
  diffEvent,
  type EventDraft,
  toEventInput,
  type ValidateOptions,
  validateDraft,
  valuesFromEvent,
} from "../../../../src/domain/event-draft.ts";
import { EVENT_FIELDS as F } from "../../../../src/ids.ts";

/** The draft's rules, with errors under the form's fields as Slack shows them. */
function validateEventForm(v: EventDraft, opts: ValidateOptions) {
  return draftErrorsToBlocks(validateDraft(v, opts));
}

import { emailOfPerson, emailsOf, personOf } from "../../../../src/domain/people.ts";
import { sampleEvent } from "../blocks/fixtures.ts";

const NOW = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;

function state(entries: Record<string, Record<string, unknown>>): ViewStateValues {
  return Object.fromEntries(
    Object.entries(entries).map(([id, v]) => [id, { [id]: v }]),
  ) as ViewStateValues;
}

describe("readEventForm", () => {
  it("reads every kind of element Slack sends", () => {
    const v = readEventForm(
      state({
        [F.title]: { type: "plain_text_input", value: "  Town hall  " },
        [F.start]: { type: "datetimepicker", selected_date_time: NOW / 1000 + 3600 },
        [F.end]: { type: "datetimepicker", selected_date_time: NOW / 1000 + 7200 },
        [F.timezone]: { type: "static_select", selected_option: { value: "Europe/Paris" } },
        [F.recurrence]: { type: "static_select", selected_option: { value: "DAILY" } },
        [F.count]: { type: "number_input", value: "5" },
        [F.frequency]: { type: "number_input", value: "2" },
        [F.access]: { type: "checkboxes", selected_options: [{ value: "restricted" }] },
        [F.audience]: { type: "checkboxes", selected_options: [] },
        [F.panelists]: { type: "multi_users_select", selected_users: ["U1", "U2"] },
        [F.channel]: { type: "conversations_select", selected_conversation: "C1" },
        [F.reminders]: { type: "checkboxes", selected_options: [{ value: "60" }, { value: "7" }] },
      }),
    );
    expect(v).toMatchObject({
      title: "Town hall",
      start: NOW + HOUR,
      end: NOW + 2 * HOUR,
      timezone: "Europe/Paris",
      recurrence: "DAILY",
      count: 5,
      frequency: 2,
      flags: { restricted: true, requireEmail: false, enableChat: false },
      panelists: ["U1", "U2"],
      channel: "C1",
      reminders: [60],
    });
    // Groups not in the view stay unset, so an edit never sends them.
    expect(v.flags?.enableAutoRecord).toBeUndefined();
  });
});

describe("validateEventForm", () => {
  const ok = { title: "T", start: NOW + HOUR, end: NOW + 2 * HOUR, timezone: "UTC" };
  it("accepts a sound form", () => {
    expect(validateEventForm(ok, { now: NOW })).toEqual({});
  });
  it.each([
    [{ title: "" }, F.title],
    [{ title: "é".repeat(201) }, F.title],
    [{ start: NOW - 1 }, F.start],
    [{ end: NOW + HOUR }, F.end],
    [{ timezone: "Mars/Olympus" }, F.timezone],
    [{ recurrence: "DAILY" as const }, F.count],
    [{ recurrence: "DAILY" as const, count: 0 }, F.count],
    [{ recurrence: "DAILY" as const, count: 2, frequency: 31 }, F.frequency],
  ])("flags %o on its own block", (bad, block) => {
    expect(Object.keys(validateEventForm({ ...ok, ...bad }, { now: NOW }))).toEqual([block]);
  });
  it("lets an edit keep a start already in the past", () => {
    expect(
      validateEventForm({ ...ok, start: NOW - HOUR }, { now: NOW, originalStart: NOW - HOUR }),
    ).toEqual({});
  });
});

describe("create and edit bodies", () => {
  it("the create body sets every flag and the three people arrays explicitly", () => {
    const body = toEventInput(
      { title: "T", start: 1, end: 2, flags: { enableChat: true }, recurrence: "DAILY", count: 3 },
      { panelists: [personOf("a@example.com")], moderators: [] },
      "UTC",
    );
    expect(body).toMatchObject({
      enableChat: true,
      restricted: false,
      customIntroOutro: false,
      attendees: [],
      timezone: "UTC",
    });
    expect(body.recurrencePattern).toMatchObject({
      recurrenceType: "DAILY",
      recurrenceCount: 3,
      frequency: 1,
      endDate: null,
    });
  });

  it("the edit body holds only what changed", () => {
    const before = sampleEvent();
    const values = valuesFromEvent(before);
    expect(diffEvent(before, values, { panelists: [personOf("omar@example.com")] })).toEqual({});
    const patch = diffEvent(
      before,
      {
        ...values,
        title: "New",
        flags: { ...values.flags, enableChat: false },
        recurrence: "DAILY",
        count: 4,
        frequency: 1,
      },
      { panelists: [personOf("OMAR@example.com")], moderators: [personOf("ada@example.com")] },
    );
    expect(patch).toEqual({
      title: "New",
      enableChat: false,
      recurrencePattern: expect.objectContaining({ recurrenceCount: 4 }),
      moderators: [{ email: "ada@example.com" }],
    });
  });
});

describe("people mapping", () => {
  it("reads both { email } objects and plain strings, lower-cased, without duplicates", () => {
    expect(emailOfPerson({ email: "A@Example.com" })).toBe("a@example.com");
    expect(emailOfPerson("b@example.com")).toBe("b@example.com");
    expect(emailOfPerson({ name: "no mail" })).toBeUndefined();
    expect(emailsOf([{ email: "a@example.com" }, "A@example.com", 7])).toEqual(["a@example.com"]);
  });
});
