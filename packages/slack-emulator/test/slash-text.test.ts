import { describe, expect, it } from "vitest";
import { escapeSlashText, linkNames, suggest } from "../src/index.ts";

// Slack's escaping of typed text and its composer's suggestions, on a small directory.

const directory = {
  users: [
    { id: "U1", name: "omar", real_name: "Omar Organizer" },
    { id: "U2", name: "kei", real_name: "Kei Organizer" },
    { id: "U3", name: "gone", deleted: true },
    { id: "UB", name: "onair", is_bot: true },
  ],
  channels: [
    { id: "C1", name: "events" },
    { id: "C2", name: "event-ops" },
    { id: "D1", name: "D1", is_im: true },
  ],
  usergroups: [{ id: "S1", handle: "organizers" }],
};

describe("escapeSlashText", () => {
  it("escapes &, < and > first, so nothing typed can pass for Slack's own markup", () => {
    expect(escapeSlashText("Q&A <!channel> <@U1> a > b", directory)).toBe(
      "Q&amp;A &lt;!channel&gt; &lt;@U1&gt; a &gt; b",
    );
  });

  it("links known channels, people, groups and special mentions; leaves unknown names", () => {
    expect(
      escapeSlashText("#events #event-ops #nope @omar @gone @organizers @channel", directory),
    ).toBe(
      "<#C1|events> <#C2|event-ops> #nope <@U1|omar> @gone <!subteam^S1|@organizers> <!channel>",
    );
  });

  it("leaves e-mail addresses' @ and words' # alone, links the address and URLs", () => {
    expect(escapeSlashText("omar@example.com issue#events (https://x.example/p).", directory)).toBe(
      "<mailto:omar@example.com|omar@example.com> issue#events (<https://x.example/p>).",
    );
  });
});

describe("linkNames", () => {
  it("links bare names in API text, keeps existing links and entities", () => {
    expect(linkNames("@omar in #events, not <@U2|kei> &amp; <#C2>", directory)).toBe(
      "<@U1|omar> in <#C1|events>, not <@U2|kei> &amp; <#C2>",
    );
  });
});

describe("suggest", () => {
  it("offers channels on # and people, groups and special mentions on @", () => {
    expect(suggest("/onair notify x #ev", undefined, directory)).toEqual({
      kind: "channel",
      start: 16,
      end: 19,
      items: [
        { label: "#events", insert: "#events " },
        { label: "#event-ops", insert: "#event-ops " },
      ],
    });
    const people = suggest("hi @o", undefined, directory);
    expect(people?.items.map((i) => i.label)).toEqual(["@omar (Omar Organizer)", "@organizers"]);
    expect(suggest("@h", undefined, directory)?.items).toEqual([
      { label: "@here", insert: "@here " },
    ]);
  });

  it("offers nothing outside a # or @ being typed, and reads up to the caret", () => {
    expect(suggest("plain words", undefined, directory)).toBeNull();
    expect(suggest("a@b", undefined, directory)).toBeNull();
    expect(suggest("#ev and more", 3, directory)?.items.map((i) => i.label)).toEqual([
      "#events",
      "#event-ops",
    ]);
  });
});
