import { entityProblems } from "@onair/slack-emulator";
import { describe, expect, it } from "vitest";
import { flexpaneEntity, workObjectEntity } from "../../../src/blocks/work-object.ts";
import type { FlexpaneInfo, UnfurlInfo } from "../../../src/domain/unfurl.ts";
import { CARD_ACTIONS } from "../../../src/ids.ts";
import { sampleEvent } from "../slack/blocks/fixtures.ts";

// The join link's Work Object and flexpane: Slack's required fields (the emulator's check of
// them), and what each surface says in each state.

const URL_ = "https://live.sandbox.example.com/123456";
const event = sampleEvent({ title: "Town <hall> & more" });
const base: UnfurlInfo = {
  event,
  organizer: "U0OMAR0ORG",
  cancelled: false,
  state: "IN_EVENT",
  present: 4,
};
const keys = (e: { entity_payload: { custom_fields?: Array<{ key: string }> } }) =>
  (e.entity_payload.custom_fields ?? []).map((f) => f.key);
const value = (e: ReturnType<typeof workObjectEntity>, key: string) =>
  e.entity_payload.custom_fields?.find((f) => f.key === key)?.value;

describe("the join link's Work Object", () => {
  it("carries what Slack requires of an unfurled entity, the title as written", () => {
    const e = workObjectEntity(base, URL_);
    expect(entityProblems(e, "/metadata/entities/0", true)).toEqual([]);
    expect(e).toMatchObject({
      app_unfurl_url: URL_,
      entity_type: "slack#/entities/item",
      external_ref: { id: event.id },
      entity_payload: { attributes: { title: { text: "Town <hall> & more" } } },
    });
    expect(keys(e)).toEqual(["state", "start", "organizer", "present"]);
    expect(value(e, "state")).toBe("Live now");
    expect(value(e, "start")).toBe(Math.floor(event.start / 1000));
  });

  it("without attendees where the conversation may not see them", () => {
    expect(keys(workObjectEntity({ ...base, present: undefined }, URL_))).toEqual([
      "state",
      "start",
      "organizer",
    ]);
  });

  it("an ended instance: Ended, when, the next start, its final figures", () => {
    const ended = {
      ...base,
      endedAt: event.start + 3_600_000,
      next: event.start + 86_400_000,
      peak: 9,
      unique: 12,
      present: 0,
    };
    const e = workObjectEntity(ended, URL_);
    expect(value(e, "state")).toBe("Ended");
    expect(keys(e)).toEqual([
      "state",
      "start",
      "organizer",
      "ended",
      "next",
      "peak",
      "unique",
      "present",
    ]);
    expect(value(e, "peak")).toBe(9);
  });
});

describe("the flexpane", () => {
  const info: FlexpaneInfo = {
    ...base,
    figures: { present: 4, peak: 5, unique: 6 },
    upcoming: [event.start, event.start + 86_400_000],
    links: {
      attendee: "live.sandbox.example.com/1",
      moderator: "live.sandbox.example.com/1/moderator",
    },
  };

  it("is an entity Slack takes for entity.presentDetails, with the card's two buttons", () => {
    const e = flexpaneEntity(info, URL_);
    expect(entityProblems(e, "/metadata", false)).toEqual([]);
    expect(e.entity_payload.actions?.primary_actions?.map((a) => a.action_id)).toEqual([
      CARD_ACTIONS.notify,
      CARD_ACTIONS.attendance,
    ]);
    expect(keys(e)).toContain("upcoming");
    expect(keys(e)).toContain("moderator_link");
    expect(keys(e)).not.toContain("panelist_link");
  });

  it("a cancelled event: no buttons, no links", () => {
    const e = flexpaneEntity({ ...info, cancelled: true, upcoming: [] }, URL_);
    expect(value(e, "state")).toBe("Cancelled");
    expect(e.entity_payload.actions).toBeUndefined();
    expect(keys(e).filter((k) => k.includes("link") || k === "join")).toEqual([]);
  });
});
