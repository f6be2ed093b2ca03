import { linkedAsStored, validateBlocks } from "@onair/slack-emulator";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { reminderText } from "../../../src/domain/reminders.ts";
import { publicEvent } from "../../../src/domain/subscription.ts";
import { renderCard } from "../../../src/live/card.ts";
import { withoutSlackLinks } from "../../../src/live/reminders.ts";
import { decodeSessions, EventLive, encodeSessions } from "../../../src/live/state.ts";
import { parseNotifyArgs } from "../../../src/slack/commands/notify-args.ts";
import { sampleEvent } from "../slack/blocks/fixtures.ts";

describe("parseNotifyArgs", () => {
  it("reads the event, an escaped channel and a noise level in any order after the event", () => {
    expect(parseNotifyArgs("ev123 <#C0EVENTS|events> every")).toEqual({
      query: "ev123",
      channel: "C0EVENTS",
      noise: "every",
    });
    expect(parseNotifyArgs("Town hall digest")).toEqual({
      query: "Town hall",
      channel: undefined,
      noise: "digest",
    });
    expect(parseNotifyArgs("ev1")).toEqual({ query: "ev1", channel: undefined, noise: undefined });
  });

  it("refuses a channel name Slack did not turn into a link", () => {
    expect(() => parseNotifyArgs("ev1 #events")).toThrow(/couldn't read the channel/);
  });
});

describe("sessions' stored form", () => {
  it("round-trips endpoint ids holding the separators", () => {
    const m = new Map([
      ["plain", [1, 0]],
      ["a,b\nc%d", [5, 9, 12, 0]],
    ]);
    expect(new Map(decodeSessions(encodeSessions(m)).map(([g, f]) => [g, f]))).toEqual(m);
  });

  it("skips a damaged line and keeps the rest", () => {
    expect(decodeSessions("good,1,0\nbad,x\nalso,2,3")).toEqual([
      ["good", [1, 0]],
      ["also", [2, 3]],
    ]);
    expect(decodeSessions(undefined)).toEqual([]);
  });
});

describe("the card and the reminders", () => {
  const event = sampleEvent();

  it("keeps organizer-only fields out of what channels see", () => {
    const pub = publicEvent(event);
    expect(pub.moderatorUrl).toBe("");
    expect(pub.participantPasscode).toBe("");
    expect(pub.dialInNumbers).toEqual({});
  });

  it("renders valid blocks whose hash changes only with the content", () => {
    const sub = {
      team: "T1",
      eventId: event.id,
      channels: ["C1"],
      secretSha256: "0".repeat(64),
      types: ["EVENT_STATE" as const],
      noise: "digest" as const,
      createdAt: 0,
      event: publicEvent(event),
    };
    const live = new EventLive();
    const a = renderCard(sub, live, "C1");
    const b = renderCard(sub, live, "C1");
    expect(a?.hash).toBe(b?.hash);
    expect(validateBlocks(a?.blocks ?? []).messages).toEqual([]);
    live.apply({
      eventId: event.id,
      instanceId: "i",
      type: "EVENT_STATE",
      info: { state: "IN_EVENT" },
    });
    expect(renderCard(sub, live, "C1")?.hash).not.toBe(a?.hash);
    expect(JSON.stringify(renderCard({ ...sub, cancelled: true }, live, "C1")?.blocks)).toContain(
      "Cancelled",
    );
  });

  it("words a reminder with the reader's own time", () => {
    const text = reminderText(event, 60);
    expect(text).toContain("starts in 1 hour");
    expect(text).toContain(`<!date^${Math.floor(event.start / 1000)}^`);
    expect(text).not.toContain(event.moderatorUrl);
  });

  it("finds a reminder again as Slack stores it, whatever the title, and tells titles apart", () => {
    const piece = fc.oneof(
      fc.string(),
      fc.constantFrom(
        "https://a.example/x",
        "www.b.example",
        "c.com/path",
        "ann@mail.example.com",
        "<https://d.example|d>",
        "*",
        ".",
        " ",
        "&",
      ),
    );
    const title = fc.array(piece, { maxLength: 6 }).map((p) => p.join(""));
    fc.assert(
      fc.property(title, title, (a, b) => {
        const sent = reminderText(sampleEvent({ title: a }), 10);
        const stored = linkedAsStored(sent).text;
        expect(withoutSlackLinks(stored)).toBe(withoutSlackLinks(sent));
        const other = reminderText(sampleEvent({ title: b }), 10);
        if (other !== sent) expect(withoutSlackLinks(other)).not.toBe(withoutSlackLinks(stored));
      }),
      { numRuns: 300 },
    );
  });
});
