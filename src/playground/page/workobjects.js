// Work Objects: the card a join link unfurls as when the app has Work Object Previews on, the
// flexpane (side panel) a click on it opens, and the switch for the app setting. What the card
// and the flexpane show is the entity the app sent (chat.unfurl metadata, entity.presentDetails),
// drawn as Slack's client draws typed fields: a timestamp in the reader's zone, a user by name.
import { ctxBase } from "./context.js";
import { formatSlackDate } from "./dates.js";
import { fill, h } from "./dom.js";
import { channelLabel, safeUrl, userLabel } from "./mrkdwn.js";
import { $, api, render, S, toast } from "./state.js";

function fieldValue(f, ctx) {
  const type = f.type ?? "string";
  switch (type) {
    case "slack#/types/timestamp":
      return h(
        "time",
        { class: "slack-date", title: `shown in ${ctx.tz}` },
        formatSlackDate(Number(f.value), "{date_short_pretty} at {time}", ctx.tz),
      );
    case "slack#/types/user":
      return f.user?.user_id
        ? h("span", { class: "mention" }, `@${userLabel(ctx, f.user.user_id)}`)
        : (f.user?.text ?? "");
    case "slack#/types/channel_id":
      return h("span", { class: "mention channel" }, `#${channelLabel(ctx, String(f.value))}`);
    case "slack#/types/link":
    case "slack#/types/email": {
      const href = type === "slack#/types/email" ? `mailto:${f.value}` : (f.link ?? f.value);
      return h("a", { href: safeUrl(href), target: "_blank", rel: "noopener" }, String(f.value));
    }
    case "array":
      return h(
        "ul",
        { class: "wo-list" },
        (f.value ?? []).map((item) =>
          h("li", {}, fieldValue({ ...item, type: item.type ?? f.item_type }, ctx)),
        ),
      );
    case "boolean":
      return f.value || f.boolean ? "Yes" : "No";
    default:
      return f.link
        ? h("a", { href: safeUrl(f.link), target: "_blank", rel: "noopener" }, String(f.value))
        : String(f.value ?? "");
  }
}

/** The entity's custom fields in its display_order (the rest after them), as label and value. */
function fields(entity, ctx) {
  const payload = entity.entity_payload ?? {};
  const list = payload.custom_fields ?? [];
  const order = payload.display_order ?? [];
  const rank = (f) => (order.includes(f.key) ? order.indexOf(f.key) : order.length);
  return [...list]
    .sort((a, b) => rank(a) - rank(b))
    .map((f) =>
      h(
        "div",
        { class: "wo-field", "data-key": f.key },
        h("div", { class: "wo-label" }, f.label ?? f.key),
        h("div", { class: "wo-value" }, fieldValue(f, ctx)),
      ),
    );
}

function heading(entity) {
  const a = entity.entity_payload?.attributes ?? {};
  return [
    h(
      "div",
      { class: "wo-product" },
      [a.product_name, a.display_type].filter(Boolean).join(" · ") || "Work Object",
    ),
    h("div", { class: "wo-title" }, a.title?.text ?? entity.url ?? ""),
  ];
}

/** The Work Object cards of a message (`work_objects`: URL as posted → entity); null if none. */
export function workObjectCards(m, ch) {
  const found = Object.entries(m.work_objects ?? {});
  if (found.length === 0) return null;
  const ctx = ctxBase();
  return found.map(([url, entity]) =>
    h(
      "div",
      {
        class: "work-object",
        role: "button",
        tabindex: "0",
        title: "Open the details",
        "data-testid": "work-object",
        "data-url": url,
        onclick: () => openDetails(ch.id, m.ts, url),
        onkeydown: (e) => {
          if (e.key === "Enter") openDetails(ch.id, m.ts, url);
        },
      },
      heading(entity),
      h("div", { class: "wo-fields" }, fields(entity, ctx)),
    ),
  );
}

async function openDetails(channel, ts, url) {
  try {
    await api("work-object/open", { user: S.me, channel, message_ts: ts, url });
    S.right = "flexpane";
    S.flexpaneKey = null;
    render();
  } catch (e) {
    toast(e.message);
  }
}

/** The flexpane last presented to the acting person, in the right-hand pane. */
export function renderFlexpane(pane) {
  if (S.right !== "flexpane") return;
  const f = S.state.flexpane;
  const key = JSON.stringify([f, S.me, ctxBase().tz]);
  if (S.flexpaneKey === key) return;
  S.flexpaneKey = key;
  if (!f) {
    fill(pane, h("p", { class: "muted small" }, "Open a Work Object to see its details here."));
    return;
  }
  const ctx = ctxBase();
  if (f.error || !f.metadata) {
    const err = f.error ?? {};
    fill(
      pane,
      h(
        "div",
        { class: "wo-error", "data-testid": "flexpane" },
        h("div", { class: "wo-title" }, err.custom_title ?? "Details are not available"),
        h("p", {}, err.custom_message ?? `Slack shows: ${err.status ?? "an error"}`),
      ),
    );
    return;
  }
  const actions = f.metadata.entity_payload?.actions ?? {};
  const buttons = [...(actions.primary_actions ?? []), ...(actions.overflow_actions ?? [])];
  fill(
    pane,
    h(
      "div",
      { class: "flexpane", "data-testid": "flexpane" },
      heading(f.metadata),
      h(
        "div",
        { class: "muted small" },
        `From a message in #${channelLabel(ctx, f.channel)}; as shown to ${userLabel(ctx, S.me)}.`,
      ),
      h("div", { class: "wo-fields" }, fields(f.metadata, ctx)),
      buttons.length
        ? h(
            "div",
            { class: "bk-actions" },
            buttons.map((b) =>
              b.url
                ? h(
                    "a",
                    { class: "bk-button", href: safeUrl(b.url), target: "_blank", rel: "noopener" },
                    b.text,
                  )
                : h(
                    "button",
                    {
                      class: `bk-button${b.style ? ` ${b.style}` : ""}`,
                      type: "button",
                      "data-action-id": b.action_id,
                      onclick: () =>
                        api("work-object/action", { user: S.me, action_id: b.action_id }).catch(
                          (e) => toast(e.message),
                        ),
                    },
                    b.text,
                  ),
            ),
          )
        : null,
    ),
  );
}

/** While the switch's change is on its way, a poll from before it must not flip it back. */
let switching = false;

/** The app's Work Object Previews switch, as the state says it is. */
export function renderWorkObjectsSwitch() {
  if (!switching) $("#work-objects").checked = S.state.workObjects === true;
}

export function wireWorkObjects() {
  $("#work-objects").addEventListener("change", (e) => {
    switching = true;
    api("work-objects", { enabled: e.target.checked })
      .catch((er) => toast(er.message))
      .finally(() => {
        switching = false;
      });
  });
}
