// The Slack calls panel: every Web API call the app made, newest first.
import { fill, h } from "./dom.js";
import { $, S } from "./state.js";

const calls = { since: 0, list: [], busy: false };

export async function pollCalls() {
  if (S.right !== "calls" || calls.busy) return;
  calls.busy = true;
  try {
    const res = await fetch(`/playground/api/calls?since=${calls.since}`);
    const body = await res.json();
    if (body.calls.length === 0 && calls.list.length > 0) return;
    calls.list = [...calls.list, ...body.calls].slice(-200);
    calls.since = calls.list.at(-1)?.seq ?? calls.since;
    fill(
      $("#calls-list"),
      [...calls.list]
        .reverse()
        .map((c) =>
          h(
            "div",
            { class: `call${c.ok ? "" : " bad"}` },
            h("span", { class: "call-method" }, c.method),
            c.channel ? h("span", { class: "muted" }, ` ${c.channel}`) : null,
            h(
              "span",
              { class: "call-status" },
              c.ok ? "ok" : `${c.error ?? "error"} (${c.status})`,
            ),
            c.messages ? h("div", { class: "call-messages" }, c.messages.join("\n")) : null,
          ),
        ),
    );
  } catch {
    // the next poll tries again
  } finally {
    calls.busy = false;
  }
}
