import { validateBlocks, validateView } from "@onair/slack-emulator";
import { describe, expect, it } from "vitest";
import { buildCancelConfirm, buildNotifyForm } from "../../../../src/blocks/dialogs.ts";
import { buildEventCard } from "../../../../src/blocks/event-card.ts";
import { buildEventForm, buildNoticeModal } from "../../../../src/blocks/event-form.ts";
import { buildEventList } from "../../../../src/blocks/event-list.ts";
import { buildHome } from "../../../../src/blocks/home.ts";
import { buildOrganizerDetails } from "../../../../src/blocks/organizer-details.ts";
import {
  buildTokenForm,
  buildTokenList,
  buildTokenMinted,
  maskToken,
} from "../../../../src/blocks/tokens.ts";
import { unfurlBlocks } from "../../../../src/blocks/unfurl.ts";
import { candidatesText } from "../../../../src/domain/resolve.ts";
import { zoneChoices } from "../../../../src/domain/zones.ts";
import { sampleEvent } from "./fixtures.ts";

const HUGE_TITLE = "Ünïcode & <tags> ".repeat(600).slice(0, 10_000);
const PANEL = Array.from({ length: 500 }, (_, i) => ({ email: `panelist${i}@example.com` }));
const huge = sampleEvent({
  title: HUGE_TITLE,
  panelists: PANEL,
  moderators: PANEL.slice(0, 300),
  // A state, a zone and an id the spec does not show, as long as the service sends them.
  status: HUGE_TITLE,
  timezone: HUGE_TITLE,
  id: HUGE_TITLE,
  // A type the spec does not show, as long as the service sends it.
  recurrencePattern: {
    recurrenceType: HUGE_TITLE,
    endDate: null,
    recurrenceCount: 5,
    frequency: 1,
    daysOfWeekMask: 0,
    dayOfMonth: 0,
    weekOfMonth: "",
  },
});

describe("builders stay within Block Kit limits at the extremes", () => {
  it("the schedule form, create and edit, with every zone option and long values", () => {
    for (const mode of ["create", "edit"] as const) {
      const view = buildEventForm({
        mode,
        privateMetadata: "{}",
        zones: zoneChoices(["Europe/Paris", "Not/AZone"]),
        values: {
          title: HUGE_TITLE,
          description: HUGE_TITLE,
          start: Date.UTC(2030, 2, 29, 17),
          end: Date.UTC(2030, 2, 29, 18),
          timezone: "Europe/Paris",
          recurrence: "DAILY",
          count: 365,
          frequency: 1,
          panelists: Array.from({ length: 500 }, (_, i) => `U${i}`),
        },
        tooManyPeople: { moderators: 300 },
        notes: ["note"],
      });
      expect(validateView(view).messages).toEqual([]);
      expect(JSON.stringify(view)).toContain("and 360 more");
      // The recurrence preview follows as the organizer types, not only on Enter.
      for (const id of ["ev_count", "ev_frequency"]) {
        const block = view.blocks.find((b) => b.block_id === id) as {
          dispatch_action?: boolean;
          element: { dispatch_action_config?: { trigger_actions_on: string[] } };
        };
        expect(block.dispatch_action).toBe(true);
        expect(block.element.dispatch_action_config?.trigger_actions_on).toContain(
          "on_character_entered",
        );
      }
    }
  });

  it("the edit form of a series made elsewhere, longer and sparser than the form offers, opens", () => {
    // Slack refuses a view whose number input starts outside its own bounds (the emulator too).
    const view = buildEventForm({
      mode: "edit",
      privateMetadata: "{}",
      zones: zoneChoices(["Europe/Paris"]),
      values: {
        title: "Daily stand-up",
        start: Date.UTC(2030, 2, 29, 17),
        end: Date.UTC(2030, 2, 29, 18),
        timezone: "Europe/Paris",
        recurrence: "DAILY",
        count: 1000,
        frequency: 90,
      },
    });
    expect(validateView(view).messages).toEqual([]);
    const text = JSON.stringify(view);
    expect(text).toContain('"initial_value":"1000"');
    expect(text).toContain('"initial_value":"90"');
  });

  it("the organizer details: shortened title with a note, 500 panelists counted", () => {
    const msg = buildOrganizerDetails(huge, "Scheduled");
    expect(validateBlocks(msg.blocks).messages).toEqual([]);
    const text = JSON.stringify(msg.blocks);
    expect(text).toContain("is 10000 characters long");
    expect(text).toContain("500 in all");
    expect(text).toContain("moderator link");
    expect(msg.text.length).toBeLessThan(1000);
  });

  it("the card and the unfurl of an event whose state the spec does not show, 10,000 characters long", () => {
    const card = buildEventCard({ event: huge });
    expect(validateBlocks(card.blocks).messages).toEqual([]);
    const unfurl = unfurlBlocks({ event: huge, present: 3, cancelled: false, state: undefined });
    expect(validateBlocks(unfurl.blocks).messages).toEqual([]);
    expect(JSON.stringify(unfurl.blocks).length).toBeLessThan(1_000);
  });

  it("the organizer details keep the heading's mentions and channel links live", () => {
    const msg = buildOrganizerDetails(
      sampleEvent(),
      "Scheduled. Its live card goes to <#C0EVENTS>. <@U1> could not be invited.",
    );
    const heading = JSON.stringify(msg.blocks[0]);
    expect(heading).toContain("<#C0EVENTS>");
    expect(heading).toContain("<@U1>");
    expect(heading).not.toContain("&lt;");
  });

  it("the list, 200 events; candidates; Home with 200 events", () => {
    const items = Array.from({ length: 200 }, (_, i) => ({
      eventId: `e${i}`,
      event: { ...huge, id: `e${i}` },
    }));
    const list = buildEventList(items);
    expect(validateBlocks(list.blocks).messages).toEqual([]);
    expect(JSON.stringify(list.blocks)).toContain("and 177 more");
    expect(
      candidatesText(
        HUGE_TITLE,
        items.map((i) => ({ eventId: i.eventId, title: HUGE_TITLE })),
      ).length,
    ).toBeLessThan(3000);
    const home = buildHome({
      link: { email: "a@example.com", userId: 1 },
      events: items.map((i) => ({ eventId: i.eventId, title: HUGE_TITLE, start: 0 })),
      canSchedule: true,
      canMint: true,
      isAdmin: true,
      settingsButton: true,
      tokens: {
        list: Array.from({ length: 30 }, (_, i) => ({
          accessToken: `home-secret-${i}-abcd`,
          clientName: HUGE_TITLE,
          creationDate: 0,
          enterpriseName: "E",
          expirationDate: null,
          roles: [],
        })),
        now: 0,
      },
    });
    expect(validateView(home).messages).toEqual([]);
    expect(JSON.stringify(home)).toContain("••••abcd");
    expect(JSON.stringify(home)).not.toContain("home-secret");
    const failed = buildHome({
      events: [],
      canSchedule: false,
      canMint: true,
      isAdmin: false,
      settingsButton: true,
      tokens: { error: "The relay is down. Try later." },
    });
    expect(JSON.stringify(failed)).toContain("The relay is down");
  });

  it("dialogs and notices", () => {
    expect(validateView(buildCancelConfirm(huge, "{}")).messages).toEqual([]);
    expect(validateView(buildNotifyForm(huge, "{}")).messages).toEqual([]);
    expect(
      validateView(buildNoticeModal("A very long modal title indeed", "x".repeat(5000))).messages,
    ).toEqual([]);
  });

  it("tokens: the form, the one message with the token, and a masked list of 100", () => {
    expect(
      validateView(
        buildTokenForm({
          privateMetadata: "{}",
          allowed: ["day", "twoWeeks", "custom", "never"],
          longestMs: 1,
        }),
      ).messages,
    ).toEqual([]);
    const token = {
      accessToken: "tok_abcdefghijklmnop1234",
      clientName: HUGE_TITLE,
      creationDate: 0,
      enterpriseName: "E",
      expirationDate: null,
      roles: ["ROLE_READONLY"],
    };
    const minted = buildTokenMinted(token);
    expect(validateBlocks(minted.blocks).messages).toEqual([]);
    // Roles are the relay's text: as many and as long as it sends, the message still posts.
    const manyRoles = buildTokenMinted({ ...token, roles: Array(200).fill(HUGE_TITLE) });
    expect(validateBlocks(manyRoles.blocks).messages).toEqual([]);
    expect(JSON.stringify(manyRoles.blocks)).toContain("and 190 more");
    expect(JSON.stringify(minted.blocks)).toContain("never expires");
    const list = buildTokenList(
      Array.from({ length: 100 }, (_, i) => ({
        ...token,
        accessToken: `secret-token-${i}-wxyz`,
        expirationDate: i % 2 ? null : Date.UTC(2030, 0, 1),
      })),
      Date.UTC(2020, 0, 1),
    );
    expect(validateBlocks(list.blocks).messages).toEqual([]);
    expect(JSON.stringify(list.blocks)).not.toContain("secret-token");
    expect(maskToken("abcdefgh")).toBe("••••efgh");
  });

  it("expired tokens are left out of the list", () => {
    const t = {
      accessToken: "x-1234",
      clientName: null,
      creationDate: 0,
      enterpriseName: "E",
      roles: [],
    };
    const list = buildTokenList([{ ...t, expirationDate: 5 }], 10);
    expect(list.text).toMatch(/no live relay tokens/);
  });
});
