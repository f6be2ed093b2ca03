import { describe, expect, it } from "vitest";
import { validateBlocks, validateView } from "../src/index.ts";

// The emulator's Block Kit gate, run directly (as builder tests will): each limit holds at the
// limit and fails one past it.

const plain = (text: string) => ({ type: "plain_text", text });
const section = (text: string) => ({ type: "section", text: { type: "mrkdwn", text } });
const button = (action_id: string, text = "Go") => ({
  type: "button",
  action_id,
  text: plain(text),
});
const options = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ text: plain(`o${i}`), value: `v${i}` }));
const modal = (extra: Record<string, unknown> = {}) => ({
  type: "modal",
  title: plain("Schedule"),
  submit: plain("Save"),
  blocks: [
    {
      type: "input",
      block_id: "title",
      label: plain("Title"),
      element: { type: "plain_text_input", action_id: "value" },
    },
  ],
  ...extra,
});

/** [what, at the limit, one past it, the pointer the failure names] */
const messageCases: [string, unknown[], unknown[], string][] = [
  [
    "blocks per message",
    Array(50).fill({ type: "divider" }),
    Array(51).fill({ type: "divider" }),
    "/blocks",
  ],
  ["section text", [section("x".repeat(3000))], [section("x".repeat(3001))], "/blocks/0/text/text"],
  [
    "header text",
    [{ type: "header", text: plain("h".repeat(150)) }],
    [{ type: "header", text: plain("h".repeat(151)) }],
    "/blocks/0/text/text",
  ],
  [
    "button text",
    [{ type: "actions", elements: [button("a", "b".repeat(75))] }],
    [{ type: "actions", elements: [button("a", "b".repeat(76))] }],
    "/blocks/0/elements/0/text/text",
  ],
  [
    "action_id",
    [{ type: "actions", elements: [button("a".repeat(255))] }],
    [{ type: "actions", elements: [button("a".repeat(256))] }],
    "/blocks/0/elements/0/action_id",
  ],
  [
    "block_id",
    [{ ...section("s"), block_id: "b".repeat(255) }],
    [{ ...section("s"), block_id: "b".repeat(256) }],
    "/blocks/0/block_id",
  ],
  [
    "fields per section",
    [{ type: "section", fields: Array(10).fill({ type: "mrkdwn", text: "f" }) }],
    [{ type: "section", fields: Array(11).fill({ type: "mrkdwn", text: "f" }) }],
    "/blocks/0/fields",
  ],
  [
    "elements per actions block",
    [{ type: "actions", elements: Array.from({ length: 25 }, (_, i) => button(`b${i}`)) }],
    [{ type: "actions", elements: Array.from({ length: 26 }, (_, i) => button(`b${i}`)) }],
    "/blocks/0/elements",
  ],
  [
    "options per static select",
    [
      {
        ...section("s"),
        accessory: { type: "static_select", action_id: "s", options: options(100) },
      },
    ],
    [
      {
        ...section("s"),
        accessory: { type: "static_select", action_id: "s", options: options(101) },
      },
    ],
    "/blocks/0/accessory/options",
  ],
  [
    "unique action_id within a block",
    [{ type: "actions", elements: [button("a"), button("b")] }],
    [{ type: "actions", elements: [button("a"), button("a")] }],
    "/blocks/0/elements/1/action_id",
  ],
  [
    "unique block_id within a message",
    [
      { ...section("a"), block_id: "x" },
      { ...section("b"), block_id: "y" },
    ],
    [
      { ...section("a"), block_id: "x" },
      { ...section("b"), block_id: "x" },
    ],
    "/blocks/1/block_id",
  ],
];

describe("validateBlocks", () => {
  it.each(messageCases)(
    "%s: fine at the limit, refused one past it",
    (_what, atLimit, past, pointer) => {
      expect(validateBlocks(atLimit)).toEqual({ ok: true, messages: [] });
      const r = validateBlocks(past);
      expect(r.ok).toBe(false);
      expect(
        r.messages.some((m) => m.startsWith("[ERROR] ") && m.endsWith(`[json-pointer:${pointer}]`)),
      ).toBe(true);
    },
  );

  it("wants plain_text where Slack does, and known block types", () => {
    expect(
      validateBlocks([{ type: "header", text: { type: "mrkdwn", text: "h" } }]).messages,
    ).toEqual(["[ERROR] must be plain_text [json-pointer:/blocks/0/text/type]"]);
    expect(validateBlocks([{ type: "carousel" }]).ok).toBe(false);
    expect(validateBlocks([section("")]).messages).toEqual([
      "[ERROR] must be more than 0 characters [json-pointer:/blocks/0/text/text]",
    ]);
    // call blocks live in messages only
    expect(validateBlocks([{ type: "call", call_id: "R1" }], { surface: "modal" }).ok).toBe(false);
  });
});

describe("validateView", () => {
  const viewCases: [string, unknown, unknown, string][] = [
    [
      "modal title",
      modal({ title: plain("t".repeat(24)) }),
      modal({ title: plain("t".repeat(25)) }),
      "/view/title/text",
    ],
    [
      "submit",
      modal({ submit: plain("s".repeat(24)) }),
      modal({ submit: plain("s".repeat(25)) }),
      "/view/submit/text",
    ],
    [
      "close",
      modal({ close: plain("c".repeat(24)) }),
      modal({ close: plain("c".repeat(25)) }),
      "/view/close/text",
    ],
    [
      "private_metadata",
      modal({ private_metadata: "m".repeat(3000) }),
      modal({ private_metadata: "m".repeat(3001) }),
      "/view/private_metadata",
    ],
    [
      "callback_id",
      modal({ callback_id: "c".repeat(255) }),
      modal({ callback_id: "c".repeat(256) }),
      "/view/callback_id",
    ],
    [
      "blocks per view",
      { type: "home", blocks: Array(100).fill({ type: "divider" }) },
      { type: "home", blocks: Array(101).fill({ type: "divider" }) },
      "/view/blocks",
    ],
  ];

  it.each(viewCases)(
    "%s: fine at the limit, refused one past it",
    (_what, atLimit, past, pointer) => {
      expect(validateView(atLimit)).toEqual({ ok: true, messages: [] });
      const r = validateView(past);
      expect(r.ok).toBe(false);
      expect(r.messages.some((m) => m.endsWith(`[json-pointer:${pointer}]`))).toBe(true);
    },
  );

  it("needs a title on modals, a submit with inputs, and a known type", () => {
    expect(validateView(modal({ title: undefined })).messages).toEqual([
      "[ERROR] missing required field [json-pointer:/view/title]",
    ]);
    expect(validateView(modal({ submit: undefined })).messages).toEqual([
      "[ERROR] must provide submit when the view has input blocks [json-pointer:/view/submit]",
    ]);
    expect(validateView({ type: "workflow_step", blocks: [] }).ok).toBe(false);
    expect(validateView({ type: "home", blocks: [section("Home")] }).ok).toBe(true);
  });
});
