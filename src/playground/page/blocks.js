// Block Kit's blocks and legacy attachments, drawn as Slack's client draws them; the elements
// inside them are elements.js. Plain DOM, no dependencies.
// ctx: { users: Map, channels: Map, tz, surface: "message"|"modal"|"home",
//        value(blockId, actionId) → state|undefined, set(blockId, actionId, state),
//        act(element, block, state), errors: {block_id: text} }
import { renderDataTable, renderDataVisualization } from "./charts.js";
import { formatSlackDate } from "./dates.js";
import { h } from "./dom.js";
import { imgFallback, renderElement } from "./elements.js";
import { channelLabel, emoji, safeUrl, textNode, userLabel } from "./mrkdwn.js";

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
    case "data_visualization":
      return renderDataVisualization(b);
    case "data_table":
      return renderDataTable(b);
    case "call":
      return callCard(b, ctx);
    default:
      return h("div", { class: "bk-unknown" }, `[${b.type} block]`);
  }
}

/**
 * A Slack call (Calls API): the block names only its call_id; Slack's client fills in the rest
 * from the call (`call.v1` in a message read back: title, join link, who is in). Drawn from what
 * the block carries, so a block with only its id still shows as a call.
 */
function callCard(b, ctx) {
  const v1 = b.call?.v1 ?? {};
  const ended = typeof v1.date_end === "number" && v1.date_end > 0;
  const people = v1.active_participants ?? [];
  const who = (p) =>
    p.slack_id ? `@${userLabel(ctx, p.slack_id)}` : (p.display_name ?? p.external_id ?? "guest");
  const join = v1.join_url ?? v1.desktop_app_join_url;
  return h(
    "div",
    { class: `bk-call${ended ? " ended" : ""}`, "data-call-id": b.call_id },
    h("div", { class: "bk-call-icon" }, "📞"),
    h(
      "div",
      { class: "bk-call-main" },
      h("div", { class: "bk-call-title" }, v1.name || "Slack call"),
      h(
        "div",
        { class: "bk-context" },
        ended
          ? `Ended ${formatSlackDate(v1.date_end, "{date_short_pretty} {time}", ctx.tz)}`
          : v1.date_start
            ? `Started ${formatSlackDate(v1.date_start, "{date_short_pretty} {time}", ctx.tz)}`
            : `Call ${b.call_id ?? ""}`,
      ),
      people.length
        ? h(
            "div",
            { class: "bk-call-people" },
            `${people.length} in: ${people.map(who).join(", ")}`,
          )
        : null,
    ),
    join && !ended
      ? h(
          "a",
          { class: "bk-button primary", href: safeUrl(join), target: "_blank", rel: "noopener" },
          "Join",
        )
      : null,
  );
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
