// The thread pane: a message's replies, drawn as the channel is, and a composer for a reply.
import { composer } from "./composer.js";
import { arrange, h, keyedNodes } from "./dom.js";
import { messageKey, messageView, shownWith } from "./messages.js";
import { S } from "./state.js";

/** The open thread in the right-hand pane: its parent, replies, and a composer for a reply. */
export function renderThread(pane) {
  if (S.right !== "thread" || !S.thread) return;
  const ch = S.state.channels.find((c) => c.id === S.thread.channel);
  if (!ch) return;
  const parent = ch.messages.find((m) => m.ts === S.thread.ts);
  const replies = ch.messages.filter((m) => m.thread_ts === S.thread.ts && m.ts !== S.thread.ts);
  const ephem = S.state.ephemerals.filter(
    (e) => e.channel === ch.id && e.thread_ts === S.thread.ts,
  );
  const key = JSON.stringify([parent, replies, ephem, S.me]);
  if (S.threadKey === key) return;
  S.threadKey = key;
  const old = pane.querySelector(".thread-list");
  const same = old?.dataset.thread === `${ch.id}:${S.thread.ts}`;
  const atBottom = old ? old.scrollHeight - old.scrollTop - old.clientHeight < 40 : true;
  const list = same
    ? old
    : h("div", {
        class: "thread-list feed",
        "data-testid": "thread",
        "data-thread": `${ch.id}:${S.thread.ts}`,
      });
  if (!same) S.threadNodes.clear();
  // As in the channel: a message is drawn again only when what it shows changed.
  const shared = shownWith(ch);
  const entries = [
    ...(parent
      ? [
          {
            key: `parent ${messageKey(parent)} ${shared}`,
            make: () => messageView(parent, ch, { inThread: true }),
          },
        ]
      : []),
    {
      key: `count ${replies.length}`,
      make: () =>
        h(
          "div",
          { class: "thread-count" },
          `${replies.length} ${replies.length === 1 ? "reply" : "replies"}`,
        ),
    },
    ...[
      ...replies.map((m) => ({
        ts: m.ts,
        key: `${messageKey(m)} ${shared}`,
        make: () => messageView(m, ch, { inThread: true }),
      })),
      ...ephem.map((e) => ({
        ts: e.ts,
        key: `${messageKey(e, true)} ${shared}`,
        make: () => messageView(e, ch, { inThread: true, ephemeral: true }),
      })),
    ].sort((a, b) => (a.ts < b.ts ? -1 : 1)),
  ];
  arrange(list, keyedNodes(entries, S.threadNodes));
  const keep = pane.querySelector(".composer");
  const head = pane.querySelector(".pane-head");
  const title = ` #${ch.name}`;
  arrange(
    pane,
    head?.dataset.title === title
      ? head
      : h(
          "div",
          { class: "pane-head", "data-title": title },
          h("b", {}, "Thread"),
          h("span", { class: "muted" }, title),
        ),
    list,
    keep?.dataset.thread === S.thread.ts ? keep : composer(ch, S.thread.ts),
  );
  pane.querySelector(".composer").dataset.thread = S.thread.ts;
  if (atBottom || !same) list.scrollTop = list.scrollHeight;
}
