// The modal on top of the stack: its blocks, the checks Slack's client makes before a submission,
// and the buttons that submit, go back, or close.

import { renderBlocks } from "./blocks.js";
import { avatar, fullValues, modalValues, viewCtx } from "./context.js";
import { fill, h } from "./dom.js";
import { textNode } from "./mrkdwn.js";
import { $, api, S, toast } from "./state.js";
import { initialState, isEmptyState } from "./view-state.js";

function clientErrors(view) {
  const values = modalValues(view);
  const errs = {};
  for (const b of view.blocks) {
    if (b.type !== "input" || !b.element) continue;
    const s =
      values[b.block_id]?.[b.element.action_id] ??
      view.state?.values?.[b.block_id]?.[b.element.action_id] ??
      initialState(b.element);
    if (!b.optional && isEmptyState(s)) errs[b.block_id] = "Please complete this required field.";
    const el = b.element;
    const v = s?.value;
    if (el.type === "number_input" && typeof v === "string" && v !== "") {
      const n = Number(v);
      if (!Number.isFinite(n) || (!el.is_decimal_allowed && !Number.isInteger(n)))
        errs[b.block_id] = "Enter a valid number.";
      else if (el.min_value !== undefined && n < Number(el.min_value))
        errs[b.block_id] = `Enter a number no lower than ${el.min_value}.`;
      else if (el.max_value !== undefined && n > Number(el.max_value))
        errs[b.block_id] = `Enter a number no higher than ${el.max_value}.`;
    }
    if (
      el.type === "plain_text_input" &&
      typeof v === "string" &&
      v !== "" &&
      el.min_length &&
      v.length < el.min_length
    ) {
      errs[b.block_id] = `Enter at least ${el.min_length} characters.`;
    }
  }
  return errs;
}

export function renderModal() {
  const root = $("#modal-root");
  const stack = S.state.modals ?? [];
  const top = stack[stack.length - 1];
  const key = top ? JSON.stringify([top.id, top.hash, top.errors, S.me, stack.length]) : null;
  if (key === S.modalKey) return;
  S.modalKey = key;
  if (!top) {
    fill(root);
    return;
  }
  const values = modalValues(top);
  // views.update keeps what the user typed in blocks that are still there (Slack does too).
  for (const b of Object.keys(values))
    if (!top.blocks.some((x) => x.block_id === b)) delete values[b];
  const local = { errors: null };
  const ctx = viewCtx({ ...top, errors: local.errors ?? top.errors }, "modal");
  const body = h("div", { class: "modal-body" }, renderBlocks(top.blocks, ctx));
  const submit = async () => {
    const errs = clientErrors(top);
    if (Object.keys(errs).length) {
      for (const [b, text] of Object.entries(errs)) {
        const blk = body.querySelector(`[data-block-id="${CSS.escape(b)}"]`);
        if (!blk) continue;
        blk.classList.add("has-error");
        blk.querySelector(".bk-error")?.remove();
        blk.append(h("div", { class: "bk-error", role: "alert" }, text));
      }
      return;
    }
    try {
      const r = await api("submit", { user: S.me, view_id: top.id, values: fullValues(top) });
      if (r.outcome?.action === "invalid")
        toast(`Slack refused the app's answer: ${r.outcome.reason}`);
    } catch (e) {
      toast(e.message);
    }
  };
  const close = () => api("close", { user: S.me, view_id: top.id }).catch((e) => toast(e.message));
  fill(
    root,
    h(
      "div",
      { class: "overlay" },
      h(
        "div",
        {
          class: "modal",
          role: "dialog",
          "data-testid": "modal",
          "data-callback-id": top.callback_id,
        },
        h(
          "div",
          { class: "modal-head" },
          stack.length > 1
            ? h("button", { class: "icon-btn", title: "Back", onclick: close }, "‹")
            : avatar(S.state.botUserId),
          h("div", { class: "modal-title" }, textNode(top.title, ctx)),
          h(
            "button",
            { class: "icon-btn", title: "Close", "data-testid": "modal-x", onclick: close },
            "×",
          ),
        ),
        body,
        h(
          "div",
          { class: "modal-foot" },
          stack.length > 1
            ? h("span", { class: "muted stack-note" }, `${stack.length} views stacked`)
            : null,
          h(
            "button",
            { class: "bk-button", "data-testid": "modal-close", onclick: close },
            top.close ? textNode(top.close, ctx) : "Cancel",
          ),
          top.submit
            ? h(
                "button",
                { class: "bk-button primary", "data-testid": "modal-submit", onclick: submit },
                textNode(top.submit, ctx),
              )
            : null,
        ),
      ),
    ),
  );
}
