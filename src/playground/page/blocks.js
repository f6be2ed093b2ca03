// Why this file is long: it renders every Block Kit block and element the app can send, one
// small function each, so the playground shows what Slack shows.
// Block Kit drawn as Slack's client draws it. Plain DOM, no dependencies.
// ctx: { users: Map, channels: Map, tz, surface: "message"|"modal"|"home",
//        value(blockId, actionId) → state|undefined, set(blockId, actionId, state),
//        act(element, block, state), errors: {block_id: text} }
import { epochToLocalInput, formatSlackDate, localInputToEpoch } from "./dates.js";
import { fill, h } from "./dom.js";
import { channelLabel, emoji, plain, safeUrl, textNode, userLabel } from "./mrkdwn.js";
// The view-state table (how each element's value appears in view.state) is the emulator's own,
// served from the package beside this file.
import {
  allOptions,
  initialState,
  selectedValues,
  stateFromValues,
  stateShape,
} from "./view-state.js";

// ---------------------------------------------------------------- rich text

function richElement(el, ctx) {
  switch (el.type) {
    case "text": {
      let node = document.createTextNode(el.text);
      const s = el.style ?? {};
      for (const [flag, tag] of [
        ["code", "code"],
        ["bold", "b"],
        ["italic", "i"],
        ["strike", "s"],
      ]) {
        if (s[flag]) node = h(tag, {}, node);
      }
      return node;
    }
    case "link":
      return h(
        "a",
        { href: safeUrl(el.url), target: "_blank", rel: "noopener" },
        el.text || el.url,
      );
    case "user":
      return h(
        "span",
        { class: `mention${el.user_id === ctx.me ? " me" : ""}` },
        `@${userLabel(ctx, el.user_id)}`,
      );
    case "channel":
      return h("span", { class: "mention channel" }, `#${channelLabel(ctx, el.channel_id)}`);
    case "usergroup":
      return h("span", { class: "mention" }, `@${el.usergroup_id}`);
    case "broadcast":
      return h("span", { class: "mention broadcast" }, `@${el.range}`);
    case "emoji":
      return document.createTextNode(emoji(el.name, el.unicode));
    case "date":
      return h(
        "time",
        { class: "slack-date", title: `${el.fallback ?? ""} (shown in ${ctx.tz})` },
        formatSlackDate(el.timestamp, el.format ?? "{date}", ctx.tz),
      );
    default:
      return document.createTextNode(el.text ?? "");
  }
}

function richBlock(part, ctx) {
  const kids = (p) => (p.elements ?? []).map((e) => richElement(e, ctx));
  switch (part.type) {
    case "rich_text_section":
      return h("div", { class: "rt-section" }, kids(part));
    case "rich_text_preformatted":
      return h("pre", {}, kids(part));
    case "rich_text_quote":
      return h("blockquote", {}, kids(part));
    case "rich_text_list": {
      const tag = part.style === "ordered" ? "ol" : "ul";
      return h(
        tag,
        { class: `rt-list indent-${part.indent ?? 0}` },
        (part.elements ?? []).map((s) => h("li", {}, kids(s))),
      );
    }
    default:
      return null;
  }
}

// ---------------------------------------------------------------- elements

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

function imgFallback(e) {
  const img = e.target;
  const box = h("div", { class: "img-fallback", title: img.alt }, "🖼 ", img.alt || "image");
  img.replaceWith(box);
}

// ---------------------------------------------------------------- blocks

function renderBlock(b, ctx) {
  switch (b.type) {
    case "header":
      return h("div", { class: "bk-header" }, textNode(b.text, ctx));
    case "divider":
      return h("hr", { class: "bk-divider" });
    case "section": {
      const acc = b.accessory;
      return h(
        "div",
        { class: `bk-section${acc ? " with-accessory" : ""}`, "data-block-id": b.block_id },
        h(
          "div",
          { class: "bk-section-main" },
          b.text ? h("div", { class: "bk-text" }, textNode(b.text, ctx)) : null,
          b.fields
            ? h(
                "div",
                { class: "bk-fields" },
                b.fields.map((f) => h("div", { class: "bk-field" }, textNode(f, ctx))),
              )
            : null,
        ),
        acc
          ? h("div", { class: "bk-accessory" }, renderElement(acc, b, ctx, { dispatch: true }))
          : null,
      );
    }
    case "context":
      return h(
        "div",
        { class: "bk-context" },
        (b.elements ?? []).map((e) =>
          e.type === "image"
            ? h("img", {
                class: "bk-context-img",
                src: e.image_url,
                alt: e.alt_text ?? "",
                onerror: imgFallback,
              })
            : textNode(e, ctx),
        ),
      );
    case "actions":
      return h(
        "div",
        { class: "bk-actions", "data-block-id": b.block_id },
        (b.elements ?? []).map((e) => renderElement(e, b, ctx, { dispatch: true })),
      );
    case "image":
      return h(
        "figure",
        { class: "bk-image" },
        b.title ? h("figcaption", {}, textNode(b.title, ctx)) : null,
        h("img", {
          src: b.image_url ?? b.slack_file?.url,
          alt: b.alt_text ?? "",
          onerror: imgFallback,
        }),
      );
    case "rich_text":
      return h(
        "div",
        { class: "bk-rich" },
        (b.elements ?? []).map((p) => richBlock(p, ctx)),
      );
    case "input": {
      const err = ctx.errors?.[b.block_id];
      return h(
        "div",
        { class: `bk-input-block${err ? " has-error" : ""}`, "data-block-id": b.block_id },
        h(
          "label",
          { class: "bk-label" },
          textNode(b.label, ctx),
          b.optional ? h("span", { class: "optional" }, " (optional)") : null,
        ),
        b.element
          ? renderElement(b.element, b, ctx, { dispatch: b.dispatch_action === true })
          : null,
        b.hint ? h("div", { class: "bk-hint" }, textNode(b.hint, ctx)) : null,
        err ? h("div", { class: "bk-error", role: "alert" }, err) : null,
      );
    }
    case "video":
      return h("div", { class: "bk-context" }, "▶ ", textNode(b.title, ctx));
    case "file":
      return h("div", { class: "bk-context" }, "📄 a file");
    default:
      return h("div", { class: "bk-unknown" }, `[${b.type} block]`);
  }
}

export function renderBlocks(blocks, ctx) {
  return h(
    "div",
    { class: "blocks" },
    (blocks ?? []).map((b) => {
      const node = renderBlock(b, ctx);
      if (node && b.block_id) node.dataset.blockId = b.block_id;
      return node;
    }),
  );
}

/** Legacy attachments: a colour bar and their own blocks or text. */
export function renderAttachments(atts, ctx) {
  return (atts ?? []).map((a) =>
    h(
      "div",
      {
        class: "attachment",
        style: `border-left-color:${/^#?[0-9a-f]{6}$/i.test(a.color ?? "") ? (a.color.startsWith("#") ? a.color : `#${a.color}`) : a.color === "danger" ? "#e01e5a" : a.color === "good" ? "#2eb67d" : "#ddd"}`,
      },
      a.pretext ? h("div", {}, textNode({ type: "mrkdwn", text: a.pretext }, ctx)) : null,
      a.title ? h("div", { class: "att-title" }, a.title) : null,
      a.blocks
        ? renderBlocks(a.blocks, ctx)
        : a.text
          ? textNode({ type: "mrkdwn", text: a.text }, ctx)
          : null,
      a.fields
        ? h(
            "div",
            { class: "bk-fields" },
            a.fields.map((f) =>
              h(
                "div",
                { class: "bk-field" },
                h("b", {}, f.title),
                h("br"),
                textNode({ type: "mrkdwn", text: f.value }, ctx),
              ),
            ),
          )
        : null,
    ),
  );
}
