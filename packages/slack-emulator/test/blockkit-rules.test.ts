import { describe, expect, it } from "vitest";
import { validateBlocks, validateView } from "../src/index.ts";

// The rules between fields Slack's element reference states, each with the case it refuses
// and the nearest case it lets through.

const plain = (text: string) => ({ type: "plain_text", text });
const opt = (v: string) => ({ text: plain(v.toUpperCase()), value: v });
const input = (element: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
  type: "input",
  block_id: `b-${String(element.action_id)}`,
  label: plain("L"),
  element,
  ...extra,
});
const modal = (blocks: unknown[]) => ({
  type: "modal",
  title: plain("T"),
  submit: plain("Save"),
  blocks,
});
const pointers = (messages: readonly string[]) =>
  messages.map((m) => /\[json-pointer:([^\]]+)\]$/.exec(m)?.[1]);

describe("initial options", () => {
  const select = (initial: unknown) => ({
    type: "static_select",
    action_id: "s",
    options: [opt("a"), opt("b")],
    initial_option: initial,
  });

  it("must be one of the options, text and value alike", () => {
    expect(validateView(modal([input(select(opt("b")))])).ok).toBe(true);
    const wrongValue = validateView(modal([input(select(opt("c")))]));
    expect(pointers(wrongValue.messages)).toEqual(["/view/blocks/0/element/initial_option"]);
    const wrongText = validateView(modal([input(select({ text: plain("not B"), value: "b" }))]));
    expect(wrongText.ok).toBe(false);
  });

  it("holds for option groups, checkboxes and multi-selects", () => {
    const grouped = {
      type: "static_select",
      action_id: "g",
      option_groups: [{ label: plain("G"), options: [opt("a"), opt("b")] }],
      initial_option: opt("b"),
    };
    expect(validateView(modal([input(grouped)])).ok).toBe(true);
    const boxes = {
      type: "checkboxes",
      action_id: "c",
      options: [opt("a"), opt("b")],
      initial_options: [opt("a"), opt("x")],
    };
    expect(pointers(validateView(modal([input(boxes)])).messages)).toEqual([
      "/view/blocks/0/element/initial_options/1",
    ]);
    const multi = { ...boxes, type: "multi_static_select", initial_options: [opt("b")] };
    expect(validateView(modal([input(multi)])).ok).toBe(true);
  });
});

describe("number inputs", () => {
  const num = (extra: Record<string, unknown>) => ({
    type: "number_input",
    action_id: "n",
    is_decimal_allowed: false,
    ...extra,
  });

  it("keep the initial value between min_value and max_value", () => {
    expect(
      validateView(modal([input(num({ min_value: "1", max_value: "10", initial_value: "10" }))]))
        .ok,
    ).toBe(true);
    expect(
      validateView(modal([input(num({ min_value: "1", max_value: "10", initial_value: "11" }))]))
        .messages,
    ).toEqual([
      "[ERROR] must be less than or equal to max_value [json-pointer:/view/blocks/0/element/initial_value]",
    ]);
    expect(
      pointers(validateView(modal([input(num({ min_value: "5", initial_value: "4" }))])).messages),
    ).toEqual(["/view/blocks/0/element/initial_value"]);
  });

  it("refuse min_value above max_value, and decimals where they are not allowed", () => {
    expect(
      pointers(validateView(modal([input(num({ min_value: "9", max_value: "3" }))])).messages),
    ).toEqual(["/view/blocks/0/element/min_value"]);
    expect(validateView(modal([input(num({ initial_value: "2.5" }))])).ok).toBe(false);
    expect(
      validateView(modal([input(num({ is_decimal_allowed: true, initial_value: "2.5" }))])).ok,
    ).toBe(true);
  });
});

describe("focus_on_load", () => {
  const text = (id: string, focus: boolean) => ({
    type: "plain_text_input",
    action_id: id,
    focus_on_load: focus,
  });

  it("is allowed on one element of a view only", () => {
    expect(validateView(modal([input(text("a", true)), input(text("b", false))])).ok).toBe(true);
    expect(validateView(modal([input(text("a", true)), input(text("b", true))])).messages).toEqual([
      "[ERROR] only one element of a view may have focus_on_load [json-pointer:/view/blocks/1/element/focus_on_load]",
    ]);
  });
});

describe("dispatch rules", () => {
  it("refuses dispatch_action on a file input", () => {
    const file = { type: "file_input", action_id: "f" };
    expect(validateView(modal([input(file)])).ok).toBe(true);
    expect(
      pointers(validateView(modal([input(file, { dispatch_action: true })])).messages),
    ).toEqual(["/view/blocks/0/dispatch_action"]);
  });

  it("takes dispatch_action_config on text inputs only, with Slack's triggers", () => {
    const cfg = { trigger_actions_on: ["on_character_entered"] };
    expect(
      validateView(
        modal([input({ type: "plain_text_input", action_id: "t", dispatch_action_config: cfg })]),
      ).ok,
    ).toBe(true);
    expect(
      validateView(
        modal([
          input({
            type: "plain_text_input",
            action_id: "t",
            dispatch_action_config: { trigger_actions_on: ["on_blur"] },
          }),
        ]),
      ).ok,
    ).toBe(false);
    expect(
      validateView(
        modal([
          input({
            type: "static_select",
            action_id: "s",
            options: [opt("a")],
            dispatch_action_config: cfg,
          }),
        ]),
      ).ok,
    ).toBe(false);
  });
});

describe("other element rules", () => {
  it("wants at least two options in an overflow menu", () => {
    const overflow = (n: number) => [
      {
        type: "actions",
        elements: [
          {
            type: "overflow",
            action_id: "o",
            options: Array.from({ length: n }, (_, i) => opt(`v${i}`)),
          },
        ],
      },
    ];
    expect(validateBlocks(overflow(2)).ok).toBe(true);
    expect(validateBlocks(overflow(1)).ok).toBe(false);
  });

  it("refuses min_length above max_length, and response_url_enabled off the conversation selects", () => {
    expect(
      validateView(
        modal([input({ type: "plain_text_input", action_id: "t", min_length: 5, max_length: 4 })]),
      ).ok,
    ).toBe(false);
    expect(
      validateView(
        modal([
          input({ type: "conversations_select", action_id: "c", response_url_enabled: true }),
        ]),
      ).ok,
    ).toBe(true);
    expect(
      validateView(
        modal([input({ type: "users_select", action_id: "u", response_url_enabled: true })]),
      ).ok,
    ).toBe(false);
  });
});
