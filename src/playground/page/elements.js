// Block Kit's interactive elements (buttons, menus, inputs, pickers, choices), drawn as Slack's
// client draws them, each reporting its new state through ctx.set and ctx.act.
import { epochToLocalInput, localInputToEpoch } from "./dates.js";
import { fill, h } from "./dom.js";
import { plain, safeUrl, textNode, userLabel } from "./mrkdwn.js";
// The view-state table (how each element's value appears in view.state) is the emulator's own,
// served from the package beside this file.
import {
  allOptions,
  initialState,
  selectedValues,
  stateFromValues,
  stateShape,
} from "./view-state.js";

function optionsFor(el, ctx) {
  const t = el.type;
  if (t.includes("users_select")) {
    return [...ctx.users.values()]
      .filter((u) => !u.is_bot)
      .map((u) => ({ value: u.id, label: u.real_name || u.name }));
  }
  if (t.includes("channels_select") || t.includes("conversations_select")) {
    const include = el.filter?.include;
    return [...ctx.channels.values()]
      .filter((c) =>
        c.is_im ? t.includes("conversations") && (!include || include.includes("im")) : true,
      )
      .filter((c) => !(el.filter?.exclude_bot_users && c.is_im))
      .map((c) => ({
        value: c.id,
        label: c.is_im ? `@${userLabel(ctx, c.user)}` : `#${c.name}`,
      }));
  }
  return allOptions(el).map((o) => ({ value: o.value, label: plain(o.text), option: o }));
}

function selectElement(el, ctx, state, change) {
  const opts = optionsFor(el, ctx);
  const chosen = selectedValues(el, state);
  const placeholder = plain(el.placeholder) || "Select an item";
  if (!el.type.startsWith("multi_")) {
    const groups = el.option_groups && stateShape(el.type)?.kind === "option";
    const optionNode = (o) =>
      h("option", { value: o.value, selected: chosen.includes(o.value) }, o.label);
    const sel = h(
      "select",
      {
        class: "bk-select",
        "data-action-id": el.action_id,
        onchange: (e) => change(stateFromValues(el, e.target.value === "" ? [] : [e.target.value])),
      },
      h("option", { value: "", selected: chosen.length === 0 }, placeholder),
      groups
        ? el.option_groups.map((g) =>
            h(
              "optgroup",
              { label: plain(g.label) },
              (g.options ?? []).map((o) => optionNode({ value: o.value, label: plain(o.text) })),
            ),
          )
        : opts.map(optionNode),
    );
    return sel;
  }
  // Multi-selects: chips for what is chosen, a menu to add more.
  const wrap = h("div", { class: "bk-multi", "data-action-id": el.action_id });
  const draw = (values) => {
    fill(
      wrap,
      ...values.map((v) =>
        h(
          "span",
          { class: "chip" },
          opts.find((o) => o.value === v)?.label ?? v,
          h(
            "button",
            {
              class: "chip-x",
              type: "button",
              title: "Remove",
              onclick: () => {
                const next = values.filter((x) => x !== v);
                draw(next);
                change(stateFromValues(el, next));
              },
            },
            "×",
          ),
        ),
      ),
      h(
        "select",
        {
          class: "bk-select add",
          onchange: (e) => {
            if (e.target.value === "") return;
            const next = [...values, e.target.value];
            draw(next);
            change(stateFromValues(el, next));
          },
        },
        h("option", { value: "" }, values.length === 0 ? placeholder : "Add…"),
        opts
          .filter((o) => !values.includes(o.value))
          .map((o) => h("option", { value: o.value }, o.label)),
      ),
    );
  };
  draw(chosen);
  return wrap;
}

function withConfirm(confirm, ctx, run) {
  if (!confirm) return run;
  return () => ctx.confirm(confirm).then((ok) => ok && run());
}

export function renderElement(el, block, ctx, opts = {}) {
  const stored = ctx.value?.(block.block_id, el.action_id);
  const state = stored ?? initialState(el);
  const change = (s) => {
    ctx.set?.(block.block_id, el.action_id, s);
    if (opts.dispatch) ctx.act(el, block, s);
  };
  switch (el.type) {
    case "button": {
      const run = () => {
        if (safeUrl(el.url)) window.open(safeUrl(el.url), "_blank", "noopener");
        ctx.act(el, block, { type: "button", value: el.value });
      };
      return h(
        "button",
        {
          class: `bk-button ${el.style ?? ""}`,
          type: "button",
          "data-action-id": el.action_id,
          onclick: withConfirm(el.confirm, ctx, run),
        },
        textNode(el.text, ctx),
      );
    }
    case "workflow_button":
      return h("button", { class: "bk-button", disabled: true }, textNode(el.text, ctx));
    case "overflow": {
      const menu = h(
        "div",
        { class: "overflow-menu" },
        (el.options ?? []).map((o) =>
          h(
            "button",
            {
              type: "button",
              onclick: withConfirm(el.confirm, ctx, () => {
                menu.classList.remove("open");
                if (safeUrl(o.url)) window.open(safeUrl(o.url), "_blank", "noopener");
                ctx.act(el, block, {
                  type: "overflow",
                  selected_option: { text: o.text, value: o.value },
                });
              }),
            },
            plain(o.text),
          ),
        ),
      );
      return h(
        "div",
        { class: "overflow" },
        h(
          "button",
          {
            class: "bk-button icon",
            type: "button",
            "data-action-id": el.action_id,
            title: "More actions",
            onclick: () => menu.classList.toggle("open"),
          },
          "⋯",
        ),
        menu,
      );
    }
    case "image":
      return h("img", {
        class: "bk-thumb",
        src: el.image_url,
        alt: el.alt_text ?? "",
        title: el.alt_text ?? "",
        onerror: imgFallback,
      });
    case "plain_text_input":
    case "email_text_input":
    case "url_text_input":
    case "number_input": {
      const tag = el.multiline ? "textarea" : "input";
      const triggers = el.dispatch_action_config?.trigger_actions_on ?? ["on_enter_pressed"];
      const type =
        { email_text_input: "email", url_text_input: "url", number_input: "number" }[el.type] ??
        "text";
      const input = h(tag, {
        class: "bk-input",
        ...(tag === "input" && { type }),
        "data-action-id": el.action_id,
        placeholder: plain(el.placeholder),
        value: state?.value ?? "",
        ...(el.max_length && { maxlength: el.max_length }),
        ...(el.type === "number_input" && {
          step: el.is_decimal_allowed ? "any" : "1",
          ...(el.min_value !== undefined && { min: el.min_value }),
          ...(el.max_value !== undefined && { max: el.max_value }),
        }),
        oninput: (e) => {
          const st = { type: el.type, value: e.target.value };
          ctx.set?.(block.block_id, el.action_id, st);
          // Slack's on_character_entered dispatches as the user types.
          if (opts.dispatch && triggers.includes("on_character_entered")) ctx.act(el, block, st);
        },
        onkeydown: (e) => {
          if (e.key !== "Enter" || tag === "textarea") return;
          e.preventDefault();
          if (opts.dispatch && triggers.includes("on_enter_pressed")) {
            ctx.act(el, block, { type: el.type, value: e.target.value });
          }
        },
      });
      if (tag === "textarea") input.value = state?.value ?? "";
      return input;
    }
    case "rich_text_input":
      return h("textarea", {
        class: "bk-input",
        "data-action-id": el.action_id,
        placeholder: plain(el.placeholder),
        oninput: (e) =>
          ctx.set?.(block.block_id, el.action_id, {
            type: el.type,
            rich_text_value: {
              type: "rich_text",
              elements: [
                { type: "rich_text_section", elements: [{ type: "text", text: e.target.value }] },
              ],
            },
          }),
      });
    case "datepicker":
      return h("input", {
        class: "bk-input date",
        type: "date",
        "data-action-id": el.action_id,
        value: state?.selected_date ?? "",
        onchange: (e) => change({ type: el.type, selected_date: e.target.value || null }),
      });
    case "timepicker":
      return h("input", {
        class: "bk-input time",
        type: "time",
        "data-action-id": el.action_id,
        value: state?.selected_time ?? "",
        onchange: (e) =>
          change({
            type: el.type,
            selected_time: e.target.value || null,
            ...(el.timezone && { timezone: el.timezone }),
          }),
      });
    case "datetimepicker": {
      const sec = state?.selected_date_time;
      return h(
        "span",
        { class: "bk-datetime" },
        h("input", {
          class: "bk-input datetime",
          type: "datetime-local",
          "data-action-id": el.action_id,
          value: sec ? epochToLocalInput(sec, ctx.tz) : "",
          onchange: (e) =>
            change({
              type: el.type,
              selected_date_time: localInputToEpoch(e.target.value, ctx.tz),
            }),
        }),
        h("span", { class: "tz-note" }, ctx.tz),
      );
    }
    case "checkboxes":
    case "radio_buttons": {
      const multi = el.type === "checkboxes";
      const chosen = selectedValues(el, state);
      const name = `${block.block_id}-${el.action_id}`;
      const box = h("div", { class: `bk-choices ${el.type}`, "data-action-id": el.action_id });
      const read = () =>
        [...box.querySelectorAll("input")].filter((i) => i.checked).map((i) => i.value);
      for (const o of el.options ?? []) {
        box.append(
          h(
            "label",
            { class: "choice" },
            h("input", {
              type: multi ? "checkbox" : "radio",
              name,
              value: o.value,
              checked: chosen.includes(o.value),
              onchange: () => {
                const values = read();
                change(stateFromValues(el, values));
              },
            }),
            h(
              "span",
              {},
              textNode(o.text, ctx),
              o.description
                ? h("span", { class: "choice-desc" }, textNode(o.description, ctx))
                : null,
            ),
          ),
        );
      }
      return box;
    }
    default:
      if (el.type?.endsWith("select")) return selectElement(el, ctx, state, change);
      return h("span", { class: "bk-unknown" }, `[${el.type}]`);
  }
}

export function imgFallback(e) {
  const img = e.target;
  const box = h("div", { class: "img-fallback", title: img.alt }, "🖼 ", img.alt || "image");
  img.replaceWith(box);
}
