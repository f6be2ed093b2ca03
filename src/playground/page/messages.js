// A conversation: its messages (each drawn again only when what it shows changed), day
// separators, scheduled messages, and the composer under them.
import { renderAttachments, renderBlocks } from "./blocks.js";
import { composer } from "./composer.js";
import { avatar, ctxBase, placeLabel, userName } from "./context.js";
import { formatSlackDate } from "./dates.js";
import { arrange, fill, h, keyedNodes } from "./dom.js";
import { mrkdwnHtml } from "./mrkdwn.js";
import { currentChannel } from "./sidebar.js";
import { $, api, render, S, toast } from "./state.js";
import { workObjectCards } from "./workobjects.js";

/** Files shared with a message: an image inline, anything else as a file to open. */
function fileList(files) {
  return h(
    "div",
    { class: "msg-files" },
    files.map((f) => {
      const href = `/playground/api/file?id=${encodeURIComponent(f.id)}`;
      return String(f.mimetype).startsWith("image/")
        ? h(
            "a",
            { href, target: "_blank", "data-testid": "file-image" },
            h("img", { class: "file-image", src: href, alt: f.alt_txt ?? f.title ?? f.name }),
          )
        : h(
            "a",
            { class: "file-chip", href, download: f.name, "data-testid": "file" },
            h("span", { class: "file-icon" }, f.filetype === "csv" ? "CSV" : "FILE"),
            h("span", {}, f.title ?? f.name),
          );
    }),
  );
}

export function messageView(m, ch, opts = {}) {
  const ctx = {
    ...ctxBase(),
    surface: "message",
    act: (el, block, state) =>
      api("action", {
        user: S.me,
        channel: ch.id,
        message_ts: m.ts,
        ...(opts.ephemeral && { ephemeral: true }),
        action_id: el.action_id,
        block_id: block.block_id,
        state,
      }).catch((e) => toast(e.message)),
  };
  // An ephemeral message comes from the app, whoever it is shown to.
  const author = opts.ephemeral ? S.state.botUserId : m.user;
  const time = new Intl.DateTimeFormat("en-US", {
    timeZone: ctx.tz,
    hour: "numeric",
    minute: "2-digit",
  }).format(Number(m.ts) * 1000);
  const hasBlocks = Array.isArray(m.blocks) && m.blocks.length > 0;
  const body = hasBlocks
    ? renderBlocks(m.blocks, ctx)
    : h("div", { class: "msg-text", html: mrkdwnHtml(m.text, ctx) });
  const replies =
    !opts.inThread && m.reply_count
      ? h(
          "button",
          { class: "replies", "data-thread": m.ts, onclick: () => openThread(ch.id, m.ts) },
          h(
            "span",
            { class: "reply-avatars" },
            (m.reply_users ?? []).slice(0, 3).map((u) => avatar(u)),
          ),
          `${m.reply_count} ${m.reply_count === 1 ? "reply" : "replies"}`,
          h(
            "span",
            { class: "reply-when" },
            `Last reply ${formatSlackDate(Number(m.latest_reply), "{ago}", ctx.tz)}`,
          ),
        )
      : null;
  return h(
    "div",
    {
      class: `msg${opts.ephemeral ? " ephemeral" : ""}`,
      "data-ts": m.ts,
      "data-testid": opts.ephemeral ? "ephemeral" : "message",
    },
    avatar(author, true),
    h(
      "div",
      { class: "msg-body" },
      h(
        "div",
        { class: "msg-head" },
        h("span", { class: "msg-author" }, userName(author)),
        author === S.state.botUserId ? h("span", { class: "app-badge" }, "APP") : null,
        h("span", { class: "msg-time", title: new Date(Number(m.ts) * 1000).toISOString() }, time),
        m.edited ? h("span", { class: "edited", "data-testid": "edited" }, "(edited)") : null,
        opts.ephemeral ? h("span", { class: "only-you" }, "👁 Only visible to you") : null,
      ),
      body,
      m.attachments ? renderAttachments(m.attachments, ctx) : null,
      m.files ? fileList(m.files) : null,
      m.unfurls ? renderAttachments(Object.values(m.unfurls), ctx) : null,
      workObjectCards(m, ch),
      replies,
    ),
  );
}

/**
 * What every message node of `ch` shows besides its message, for keyedNodes: who looks, in which
 * zone, the people and channel names a message may mention, the app's own identity.
 */
export function shownWith(ch) {
  const st = S.state;
  const names = st.channels.map((c) => [c.id, c.name, c.is_private]);
  return JSON.stringify([ch.id, S.me, st.users, st.botUserId, ctxBase().tz, names]);
}

/** A message's key: all of it (an edit, a reply count, a reaction changes it). */
export function messageKey(m, ephemeral = false) {
  return `${ephemeral ? "e" : "m"} ${JSON.stringify(m)}`;
}

/** A channel's (or the app's DM's) messages, scheduled messages and composer in `main`. */
export function renderChannel(main) {
  const ch = currentChannel();
  if (!ch) {
    fill(
      main,
      h("div", { class: "empty" }, "Open a channel, or run /onair help in the composer to start."),
      composer(null),
    );
    return;
  }
  const st = S.state;
  const shared = shownWith(ch);
  const items = [
    ...ch.messages
      .filter((m) => !m.thread_ts || m.thread_ts === m.ts || m.subtype === "thread_broadcast")
      .map((m) => ({
        ts: m.ts,
        key: messageKey(m),
        node: () => messageView(m, ch),
      })),
    ...st.ephemerals
      .filter((e) => e.channel === ch.id && !e.thread_ts)
      .map((e) => ({
        ts: e.ts,
        key: messageKey(e, true),
        node: () => messageView(e, ch, { ephemeral: true }),
      })),
  ].sort((a, b) => (a.ts < b.ts ? -1 : 1));
  // The messages' own keys (a parent's carries its replies' count), each stringified once.
  const key = JSON.stringify([
    shared,
    items.map((i) => i.key),
    // Reminders deleted (an event cancelled or gone) must leave the list too.
    st.scheduled.filter((s) => s.channel === ch.id),
  ]);
  let feed = $("#feed");
  const scheduled = st.scheduled.filter((s) => s.channel === ch.id);
  if (!feed || feed.dataset.channel !== ch.id || S.feedKey !== key) {
    const same = feed?.dataset.channel === ch.id && feed.parentNode === main;
    const atBottom = feed ? feed.scrollHeight - feed.scrollTop - feed.clientHeight < 40 : true;
    const oldTop = same ? feed.scrollTop : null;
    if (!same) {
      feed = h("div", { id: "feed", class: "feed", "data-channel": ch.id });
      S.feedNodes.clear();
    }
    // Each message's node is kept while what it shows is unchanged: a card updated every second
    // while live redraws that card only, and a click on any other message's button is not lost.
    const tz = ctxBase().tz;
    arrange(
      feed,
      keyedNodes(
        items.length === 0
          ? [
              {
                key: `empty ${shared}`,
                make: () =>
                  h(
                    "div",
                    { class: "empty" },
                    `This is the very beginning of ${ch.is_im ? "your messages" : `#${ch.name}`}. Try /onair help.`,
                  ),
              },
            ]
          : withDays(items, tz, shared),
        S.feedNodes,
      ),
    );
    const head = h(
      "header",
      { class: "chan-head" },
      h(
        "div",
        { class: "chan-title" },
        ch.is_im ? placeLabel(ch) : `${ch.is_private ? "🔒" : "#"} ${ch.name}`,
      ),
      ch.topic ? h("div", { class: "chan-topic" }, ch.topic) : null,
      h("div", { class: "spacer" }),
      scheduled.length
        ? h(
            "span",
            { class: "chip sched-chip", "data-testid": "scheduled-count" },
            `🕐 ${scheduled.length} scheduled`,
          )
        : null,
    );
    const sched = scheduled.length
      ? h(
          "details",
          { class: "scheduled", "data-testid": "scheduled" },
          h(
            "summary",
            {},
            `${scheduled.length} scheduled message${scheduled.length === 1 ? "" : "s"} in this conversation`,
          ),
          scheduled
            .sort((a, b) => a.post_at - b.post_at)
            .map((s) =>
              h(
                "div",
                { class: "sched-item" },
                h(
                  "span",
                  { class: "sched-when" },
                  formatSlackDate(s.post_at, "{date_short_pretty} {time}", tz),
                ),
                h("span", { class: "sched-text", html: mrkdwnHtml(s.text, ctxBase()) }),
              ),
            ),
        )
      : null;
    // A list the person opened stays open when it is drawn again.
    if (sched && same && main.querySelector(":scope > details.scheduled")?.open) sched.open = true;
    const existingComposer = $("#main .composer");
    const comp = existingComposer?.dataset.channel === ch.id ? existingComposer : composer(ch);
    // The feed and the composer stay where they are; the header and the list around them change.
    arrange(main, head, feed, sched, comp);
    if (oldTop !== null && !atBottom) feed.scrollTop = oldTop;
    else feed.scrollTop = feed.scrollHeight;
    S.feedKey = key;
  }
}

/**
 * Slack's day separators ("Today", "Yesterday", a date), in the viewer's zone, among the items:
 * entries for keyedNodes, each keyed by what it shows and by `shared` (what every node shows).
 */
function withDays(items, tz, shared) {
  const out = [];
  let last = "";
  for (const i of items) {
    const day = formatSlackDate(Number(i.ts), "{date_long_pretty}", tz);
    if (day !== last) {
      out.push({
        key: `day ${day} ${shared}`,
        make: () => h("div", { class: "day-sep" }, h("span", {}, day)),
      });
      last = day;
    }
    out.push({ key: `${i.key} ${shared}`, make: i.node });
  }
  return out;
}

export function openThread(channel, ts) {
  S.thread = { channel, ts };
  S.right = "thread";
  S.threadKey = null;
  render();
}
