// What every drawing needs: the Block Kit context (who looks, in which zone, the directory), the
// people's names and faces, and a view's inputs (what the person typed, as Slack's client keeps it).

import { h } from "./dom.js";
import { textNode } from "./mrkdwn.js";
import { api, S, toast } from "./state.js";
import { initialState } from "./view-state.js";

export function ctxBase() {
  const st = S.state;
  const me = st.users.find((u) => u.id === S.me);
  return {
    me: S.me,
    tz: me?.tz ?? "UTC",
    users: new Map(st.users.map((u) => [u.id, u])),
    channels: new Map(st.channels.map((c) => [c.id, c])),
    confirm: confirmDialog,
  };
}

export function confirmDialog(c) {
  return new Promise((resolve) => {
    const close = (ok) => {
      overlay.remove();
      resolve(ok);
    };
    const overlay = h(
      "div",
      { class: "overlay confirm-overlay" },
      h(
        "div",
        { class: "confirm", role: "dialog" },
        h("h3", {}, c.title?.text ?? "Are you sure?"),
        h("div", { class: "confirm-text" }, textNode(c.text, ctxBase())),
        h(
          "div",
          { class: "modal-foot" },
          h(
            "button",
            { class: "bk-button", onclick: () => close(false) },
            c.deny?.text ?? "Cancel",
          ),
          h(
            "button",
            {
              class: `bk-button ${c.style === "danger" ? "danger" : "primary"}`,
              onclick: () => close(true),
            },
            c.confirm?.text ?? "Yes",
          ),
        ),
      ),
    );
    document.body.append(overlay);
  });
}

export function userName(id) {
  if (id === S.state.botUserId) return S.state.appName;
  const u = S.state.users.find((x) => x.id === id);
  return u ? u.real_name || u.name : id;
}

export function avatar(id, big) {
  const isBot = id === S.state.botUserId;
  const label = isBot
    ? "ON"
    : userName(id)
        .split(/\s+/)
        .map((w) => w[0])
        .join("")
        .slice(0, 2);
  const hue = [...id].reduce((a, c) => a + c.charCodeAt(0), 0) % 360;
  return h(
    "div",
    {
      class: `avatar${isBot ? " bot" : ""}${big ? " big" : ""}`,
      style: isBot ? "" : `background:hsl(${hue} 45% 45%)`,
    },
    label,
  );
}

export function placeLabel(c) {
  if (c.is_im) return c.user === S.me ? `${S.state.appName}` : userName(c.user);
  return c.name;
}

export function modalValues(view) {
  if (!S.values[view.id]) S.values[view.id] = {};
  return S.values[view.id];
}

export function viewCtx(view, surface) {
  const values = modalValues(view);
  return {
    ...ctxBase(),
    surface,
    errors: view.errors ?? {},
    value: (b, a) => values[b]?.[a] ?? view.state?.values?.[b]?.[a],
    set: (b, a, s) => {
      values[b] = { ...values[b], [a]: s };
    },
    act: (el, block, state) =>
      api("action", {
        user: S.me,
        view_id: view.id,
        action_id: el.action_id,
        block_id: block.block_id,
        state,
        values: fullValues(view),
      }).catch((e) => toast(e.message)),
  };
}

/**
 * Every stateful element's current value, as Slack's client sends in view.state: what the
 * user changed, else what the app stored, else the element's initial value.
 */
export function fullValues(view) {
  const local = modalValues(view);
  const out = {};
  for (const b of view.blocks ?? []) {
    if (!b.block_id) continue;
    const els = [
      ...(b.type === "actions" ? (b.elements ?? []) : []),
      ...(b.accessory ? [b.accessory] : []),
      ...(b.element ? [b.element] : []),
    ];
    for (const el of els) {
      const init = initialState(el);
      if (!init || !el.action_id) continue;
      const v =
        local[b.block_id]?.[el.action_id] ??
        view.state?.values?.[b.block_id]?.[el.action_id] ??
        init;
      out[b.block_id] = { ...out[b.block_id], [el.action_id]: v };
    }
  }
  return out;
}
