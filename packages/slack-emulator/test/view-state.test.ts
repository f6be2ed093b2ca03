import { describe, expect, it } from "vitest";
import {
  initialState,
  isEmptyState,
  optionObject,
  stateFromValues,
  stateShape,
  VIEW_STATE,
} from "../src/index.ts";
import { selectedValues } from "../src/view-state.js";

// The one table of view-state shapes the driver and the page share.

const opt = (v: string, description?: string) => ({
  text: { type: "plain_text", text: v.toUpperCase() },
  value: v,
  ...(description !== undefined && { description: { type: "plain_text", text: description } }),
});

describe("initial state", () => {
  it("has one row per stateful element, each starting empty or at its initial_* value", () => {
    for (const [type, shape] of Object.entries(VIEW_STATE)) {
      const empty = initialState({ type, action_id: "a" });
      expect(empty, type).toEqual({ type, [shape.key]: shape.multi ? [] : null });
      expect(isEmptyState(empty), type).toBe(true);
    }
    expect(initialState({ type: "button", action_id: "b" })).toBeUndefined();
    expect(stateShape("overflow")).toBeUndefined();
  });

  it("takes each element's own initial field", () => {
    expect(initialState({ type: "plain_text_input", initial_value: "x" })).toEqual({
      type: "plain_text_input",
      value: "x",
    });
    expect(initialState({ type: "users_select", initial_user: "U1" })).toEqual({
      type: "users_select",
      selected_user: "U1",
    });
    expect(initialState({ type: "checkboxes", initial_options: [opt("a")] })).toEqual({
      type: "checkboxes",
      selected_options: [opt("a")],
    });
    expect(initialState({ type: "datetimepicker", initial_date_time: 1700000000 })).toEqual({
      type: "datetimepicker",
      selected_date_time: 1700000000,
    });
  });

  it("reports a timepicker's timezone beside the time; a file input holds files", () => {
    expect(
      initialState({ type: "timepicker", initial_time: "09:30", timezone: "Europe/Berlin" }),
    ).toEqual({ type: "timepicker", selected_time: "09:30", timezone: "Europe/Berlin" });
    expect(initialState({ type: "file_input", action_id: "f" })).toEqual({
      type: "file_input",
      files: [],
    });
  });
});

describe("chosen values", () => {
  const select = { type: "static_select", options: [opt("a", "first"), opt("b")] };

  it("puts the element's own option, description included, in the state", () => {
    expect(optionObject(select, "a")).toEqual(opt("a", "first"));
    expect(optionObject(select, "zz")).toBeUndefined();
    expect(stateFromValues(select, ["b"])).toEqual({
      type: "static_select",
      selected_option: opt("b"),
    });
    expect(stateFromValues(select, [])).toEqual({ type: "static_select", selected_option: null });
  });

  it("keeps ids for people and conversations, lists for multi-selects", () => {
    const users = { type: "multi_users_select" };
    const state = stateFromValues(users, ["U1", "U2"]);
    expect(state).toEqual({ type: "multi_users_select", selected_users: ["U1", "U2"] });
    expect(selectedValues(users, state)).toEqual(["U1", "U2"]);
    expect(stateFromValues({ type: "channels_select" }, ["C1"])).toEqual({
      type: "channels_select",
      selected_channel: "C1",
    });
  });

  it("keeps an external select's value the app will supply", () => {
    expect(stateFromValues({ type: "external_select" }, ["ext-1"])).toEqual({
      type: "external_select",
      selected_option: { text: { type: "plain_text", text: "ext-1" }, value: "ext-1" },
    });
  });
});
