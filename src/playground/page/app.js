// Why this file is long: it is the whole page client (composer, channels, threads, modals, App
// Home, the live panel) without a build step or framework; split into modules it would need a
// bundler the playground deliberately does without.
// The playground client: polls the workspace as the acting user sees it and sends what they
// do to /playground/api/… (the server signs it as Slack would and hands it to the app).
import {
  arrange,
  fill,
  formatSlackDate,
  h,
  initialState,
  isEmptyState,
  keyedNodes,
  mrkdwnHtml,
  renderAttachments,
  renderBlocks,
  textNode,
} from "./blocks.js";
import { escapeSlashText, suggest } from "./slash-text.js";

const POLL_MS = 700;
const $ = (sel) => document.querySelector(sel);

const S = {
  me: localStorage.getItem("onair.me") || "U0ADA0ADMIN",
  place: localStorage.getItem("onair.place") || "C0EVENTS",
  thread: null, // { channel, ts }
  right: "live",
  state: null,
  etag: null,
  meta: null,
  values: {}, // view id → { block_id: { action_id: state } }
  seen: {}, // "user:channel" → the newest activity ts seen there
  modalKey: null,
  homeKey: null,
  navKey: null,
  feedNodes: new Map(), // what a feed node shows → the node (see keyedNodes)
  threadNodes: new Map(), // the same for the open thread
  liveEvent: localStorage.getItem("onair.liveEvent") || "",
  log: [],
  busy: 0,
};

// ---------------------------------------------------------------- talking to the server

async function api(path, body, method = "POST") {
  S.busy++;
  document.body.classList.add("busy");
  try {
    const res = await fetch(`/playground/api/${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const json = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(json.error ?? `HTTP ${res.status}`);
    return json;
  } finally {
    S.busy--;
    if (S.busy === 0) document.body.classList.remove("busy");
    refresh();
  }
}

function toast(text, kind = "error") {
  const t = h("div", { class: `toast ${kind}`, role: "status" }, text);
  $("#toasts").append(t);
  setTimeout(() => t.remove(), 6000);
}

let polling = false;
let again = false;
async function refresh() {
  if (polling) {
    again = true;
    return;
  }
  polling = true;
  try {
    const res = await fetch(`/playground/api/state?user=${encodeURIComponent(S.me)}`, {
      headers: S.etag ? { "if-none-match": S.etag } : {},
    });
    if (res.status === 200) {
      S.etag = res.headers.get("etag");
      S.state = await res.json();
      render();
    }
    $("#conn").classList.toggle("down", !(res.status === 200 || res.status === 304));
  } catch {
    $("#conn").classList.add("down");
  } finally {
    polling = false;
    if (again) {
      again = false;
      refresh();
    }
  }
}

// ---------------------------------------------------------------- context for blocks

function ctxBase() {
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

function confirmDialog(c) {
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

// ---------------------------------------------------------------- rendering

function userName(id) {
  if (id === S.state.botUserId) return S.state.appName;
  const u = S.state.users.find((x) => x.id === id);
  return u ? u.real_name || u.name : id;
}

function avatar(id, big) {
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

function placeLabel(c) {
  if (c.is_im) return c.user === S.me ? `${S.state.appName}` : userName(c.user);
  return c.name;
}

function render() {
  if (!S.state) return;
  renderTop();
  renderSidebar();
  renderMain();
  renderRight();
  renderModal();
}

function renderTop() {
  const sel = $("#acting");
  const people = S.state.users.filter((u) => !u.is_bot);
  if (sel.options.length !== people.length) {
    fill(
      sel,
      ...people.map((u) =>
        h(
          "option",
          { value: u.id },
          `${u.real_name}${u.is_admin ? " · admin" : ""}${u.title ? ` · ${u.title}` : ""}`,
        ),
      ),
    );
  }
  sel.value = S.me;
  const me = people.find((u) => u.id === S.me);
  $("#tz").textContent = me ? `times in ${me.tz}` : "";
  $("#team").textContent = S.state.team.name;
}

function renderSidebar() {
  const st = S.state;
  const nav = $("#nav");
  // Unread: top-level messages (or edits) since this person last looked at the channel.
  const activity = (c) =>
    c
      ? c.messages
          .filter((m) => !m.thread_ts || m.thread_ts === m.ts)
          .reduce((n, m) => Math.max(n, Number(m.edited?.ts ?? m.latest_reply ?? m.ts)), 0)
      : 0;
  const seenKey = (id) => `${S.me}:${id}`;
  for (const c of st.channels) {
    // What was there when the page first saw the channel counts as read.
    if (c.id === S.place || S.seen[seenKey(c.id)] === undefined)
      S.seen[seenKey(c.id)] = activity(c);
  }
  const unread = (c) => c && activity(c) > (S.seen[seenKey(c.id)] ?? 0);
  const item = (key, icon, label, extra, ch) =>
    h(
      "button",
      {
        class: `nav-item${S.place === key ? " active" : ""}${unread(ch) ? " unread" : ""}`,
        "data-place": key,
        onclick: () => go(key),
      },
      h("span", { class: "nav-icon" }, icon),
      h("span", { class: "nav-label" }, label),
      extra,
    );
  const chans = st.channels.filter((c) => !c.is_im);
  const dm = st.channels.find((c) => c.is_im && c.user === S.me);
  if (S.place === "dm" && dm) S.place = dm.id;
  // Drawn again only when what it shows changed: a poll redrawing it between a button going down
  // and up would lose the click (every few seconds while a card is live).
  const key = JSON.stringify([
    S.me,
    S.place,
    st.botUserId,
    st.appName,
    dm?.id,
    unread(dm),
    chans.map((c) => [c.id, c.name, c.is_private, c.member, unread(c)]),
  ]);
  if (key === S.navKey && nav.firstChild) return;
  S.navKey = key;
  fill(
    nav,
    ...[
      h("div", { class: "nav-section" }, "Apps"),
      item("home", avatar(st.botUserId), `${st.appName} · Home`),
      item(dm ? dm.id : "dm", avatar(st.botUserId), `${st.appName} · Messages`, null, dm),
      h("div", { class: "nav-section" }, "Channels"),
      chans.map((c) =>
        item(
          c.id,
          c.is_private ? "⊡" : "#",
          c.name,
          c.member ? null : h("span", { class: "nav-note" }, "not a member"),
          c,
        ),
      ),
    ].flat(),
  );
}

function go(place) {
  S.place = place;
  S.thread = null;
  if (S.right === "thread") S.right = "live";
  localStorage.setItem("onair.place", place);
  S.feedKey = null;
  if (place === "home") api("home", { user: S.me }).catch((e) => toast(e.message));
  render();
}

function currentChannel() {
  const st = S.state;
  if (S.place === "home") return null;
  if (S.place === "dm") return st.channels.find((c) => c.is_im && c.user === S.me) ?? null;
  return st.channels.find((c) => c.id === S.place) ?? null;
}

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

function messageView(m, ch, opts = {}) {
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
      replies,
    ),
  );
}

/**
 * What every message node of `ch` shows besides its message, for keyedNodes: who looks, in which
 * zone, the people and channel names a message may mention, the app's own identity.
 */
function shownWith(ch) {
  const st = S.state;
  const names = st.channels.map((c) => [c.id, c.name, c.is_private]);
  return JSON.stringify([ch.id, S.me, st.users, st.botUserId, ctxBase().tz, names]);
}

/** A message's key: all of it (an edit, a reply count, a reaction changes it). */
function messageKey(m, ephemeral = false) {
  return `${ephemeral ? "e" : "m"} ${JSON.stringify(m)}`;
}

function renderMain() {
  const main = $("#main");
  if (S.place === "home") return renderHome(main);
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

function composer(ch, threadTs) {
  const ta = h("textarea", {
    class: "composer-input",
    rows: 1,
    "data-testid": threadTs ? "thread-composer" : "composer",
    placeholder: ch
      ? `${threadTs ? "Reply…" : `Message ${ch.is_im ? S.state.appName : `#${ch.name}`}`} — try /onair help`
      : "Try /onair help",
    onkeydown: (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        send();
      }
    },
  });
  const hints = h("div", { class: "hints", hidden: true, "data-testid": "composer-hints" });
  // What Slack will send the app for a command (should_escape): channels, people, links and
  // &, <, > rewritten, as the person sees before pressing Enter here.
  const preview = h("div", { class: "muted small sends", hidden: true, "data-testid": "sends" });
  const directory = () => ({
    users: S.state?.users ?? [],
    channels: (S.state?.channels ?? []).filter((c) => !c.is_im),
    usergroups: S.state?.usergroups ?? [],
  });
  const offer = (items, pick) => {
    hints.hidden = items.length === 0;
    fill(
      hints,
      items.map((item) =>
        h(
          "button",
          {
            type: "button",
            class: "hint",
            onclick: () => {
              pick(item);
              hints.hidden = true;
              ta.focus();
              ta.dispatchEvent(new Event("input"));
            },
          },
          item.label,
        ),
      ),
    );
  };
  ta.addEventListener("input", () => {
    const text = ta.value;
    const typed = text.trim();
    const command = /^\s*\/[a-z0-9_-]+\s+(.*)$/is.exec(text);
    preview.hidden = !command;
    if (command) fill(preview, `Slack sends: ${escapeSlashText(command[1].trim(), directory())}`);
    // A #channel or @person being typed: Slack's composer offers the matching ones.
    const s = suggest(text, ta.selectionStart, directory());
    if (s && s.items.length > 0) {
      offer(s.items.slice(0, 8), (item) => {
        ta.value = `${text.slice(0, s.start)}${item.insert}${text.slice(s.end)}`;
        const caret = s.start + item.insert.length;
        ta.setSelectionRange(caret, caret);
      });
      return;
    }
    // Offer subcommands while the first word after the command is being typed.
    const offering = typed.startsWith("/") && typed.split(/\s+/).length <= 2;
    const list = offering
      ? (S.meta?.commands ?? []).filter((c) => c.command.startsWith(typed) && c.command !== typed)
      : [];
    // As Slack's composer lists an app's commands: the usage, then what it does.
    offer(
      list.map((c) => ({
        label: h(
          "span",
          {},
          h("b", {}, c.command),
          c.args ? ` ${c.args}` : "",
          h("span", { class: "muted what" }, ` — ${c.what}`),
        ),
        insert: c.command,
      })),
      (item) => {
        ta.value = `${item.insert} `;
      },
    );
  });
  const send = async () => {
    hints.hidden = true;
    preview.hidden = true;
    const text = ta.value.trim();
    if (!text) return;
    const channel = ch?.id ?? (S.place === "dm" ? S.me : "C0GENERAL");
    ta.value = "";
    try {
      if (text.startsWith("/")) await api("command", { user: S.me, channel, text });
      else
        await api("message", {
          user: S.me,
          channel,
          text,
          ...(threadTs && { thread_ts: threadTs }),
        });
    } catch (e) {
      ta.value = text;
      toast(e.message);
    }
  };
  // Slack's lightning bolt: the app's global shortcuts, from any conversation (not a thread).
  const bolt = threadTs
    ? null
    : h(
        "button",
        {
          class: "bolt",
          type: "button",
          title: "Shortcuts",
          "data-testid": "shortcuts",
          onclick: () =>
            offer(
              (S.meta?.shortcuts ?? []).map((x) => ({ label: `⚡ ${x.name} — ${x.what}`, x })),
              async ({ x }) => {
                try {
                  await api("shortcut", { user: S.me, callback_id: x.callback_id });
                } catch (e) {
                  toast(e.message);
                }
              },
            ),
        },
        "⚡",
      );
  return h(
    "div",
    { class: "composer", "data-channel": ch?.id ?? "" },
    hints,
    preview,
    bolt,
    ta,
    h("button", { class: "send", title: "Send", onclick: send }, "➤"),
  );
}

function viewCtx(view, surface) {
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
function fullValues(view) {
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

function renderHome(main) {
  const home = S.state.home;
  const key = JSON.stringify([S.me, home]);
  if (S.homeKey === key && main.querySelector(".home")) return;
  S.homeKey = key;
  fill(
    main,
    h(
      "header",
      { class: "chan-head" },
      avatar(S.state.botUserId),
      h("div", { class: "chan-title" }, S.state.appName),
      h(
        "div",
        { class: "tabs" },
        h("span", { class: "tab active" }, "Home"),
        h("button", { class: "tab", onclick: () => go("dm") }, "Messages"),
      ),
    ),
    h(
      "div",
      { class: "home feed", "data-testid": "home" },
      home
        ? renderBlocks(home.blocks, viewCtx(home, "home"))
        : h("div", { class: "empty" }, "Opening the Home tab…"),
    ),
  );
}

function openThread(channel, ts) {
  S.thread = { channel, ts };
  S.right = "thread";
  S.threadKey = null;
  renderRight();
}

function renderRight() {
  const right = $("#right");
  $("#tab-live").classList.toggle("active", S.right === "live");
  $("#tab-thread").classList.toggle("active", S.right === "thread");
  $("#tab-thread").disabled = !S.thread;
  $("#tab-calls").classList.toggle("active", S.right === "calls");
  $("#live").hidden = S.right !== "live";
  $("#calls").hidden = S.right !== "calls";
  const pane = $("#thread");
  pane.hidden = S.right !== "thread";
  renderLive();
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
  void right;
}

// ---------------------------------------------------------------- the live-event panel

function renderLive() {
  const events = S.state.events ?? [];
  const sel = $("#live-event");
  const want = JSON.stringify(
    events.map((e) => [e.eventId, e.title, e.state, e.cancelled, e.gone]),
  );
  if (sel.dataset.key !== want) {
    sel.dataset.key = want;
    fill(
      sel,
      h(
        "option",
        { value: "" },
        events.length ? "Pick an event…" : "No events yet: /onair schedule",
      ),
      events.map((e) =>
        h(
          "option",
          { value: e.eventId },
          `${e.title}${e.cancelled ? " (cancelled)" : ""}${e.gone ? " (gone)" : ""} · ${e.eventId}`,
        ),
      ),
    );
    if (!S.liveEvent && events[0]) S.liveEvent = events[0].eventId;
  }
  if (document.activeElement !== $("#live-id")) {
    sel.value = events.some((e) => e.eventId === S.liveEvent) ? S.liveEvent : "";
    $("#live-id").value = S.liveEvent;
  }
  const ev = events.find((e) => e.eventId === S.liveEvent);
  fill(
    $("#live-status"),
    ev
      ? h(
          "div",
          { class: "live-figures" },
          // A gone event is no longer at the service: its last figures mean nothing now.
          ev.gone
            ? h(
                "span",
                { class: "state-pill GONE", "data-testid": "live-state" },
                "GONE: the service no longer has it",
              )
            : [
                h(
                  "span",
                  { class: `state-pill ${ev.state}`, "data-testid": "live-state" },
                  ev.state.replace("_", " "),
                ),
                h("span", {}, `now ${ev.present}`),
                h("span", {}, `peak ${ev.peak}`),
                h("span", {}, `unique ${ev.unique}`),
              ],
        )
      : h(
          "div",
          { class: "muted" },
          S.liveEvent
            ? "Not known to the app's store (yet)."
            : "Schedule an event, then drive it from here.",
        ),
  );
  const log = $("#live-log");
  if (log.dataset.n !== String(S.log.length)) {
    log.dataset.n = String(S.log.length);
    fill(
      log,
      ...S.log
        .slice(-8)
        .reverse()
        .map((l) => h("div", { class: `log-line ${l.ok ? "" : "bad"}` }, l.text)),
    );
  }
}

function logLine(text, ok = true) {
  S.log.push({ text: `${new Date().toLocaleTimeString()} ${text}`, ok });
  renderLive();
}

async function control(path, body, describe, method = "POST") {
  if (path !== "control/faults" && !S.liveEvent) {
    toast("Pick an event first (or type its id).");
    return;
  }
  try {
    const out = await api(path, body, method);
    const said = describe(out);
    if (typeof said === "string") logLine(said);
    else logLine(said.text, said.ok);
  } catch (e) {
    logLine(e.message, false);
    toast(e.message);
  }
}

/**
 * What a state drive did, told truly: the sandbox took the state, but the app only hears of it
 * through a webhook delivery (none registered, or every one failed, and the card stays as it is).
 */
function driveOutcome(o) {
  const list = o.deliveries ?? [];
  const ok = list.filter((d) => d.ok).length;
  const head = `${o.state} → ${list.length} webhook deliver${list.length === 1 ? "y" : "ies"}`;
  if (list.length === 0) {
    return {
      text: `${head}: no webhook registered, so the app did not hear it (post the card with /onair notify first)`,
      ok: false,
    };
  }
  if (ok === 0) {
    const why = list[0].error ?? `HTTP ${list[0].status}`;
    return { text: `${head}, all failed (${why}): the app did not hear it`, ok: false };
  }
  return { text: `${head} (instance ${o.instanceId})`, ok: true };
}

function wireLive() {
  $("#live-event").addEventListener("change", (e) => {
    S.liveEvent = e.target.value;
    localStorage.setItem("onair.liveEvent", S.liveEvent);
    renderLive();
  });
  $("#live-id").addEventListener("change", (e) => {
    S.liveEvent = e.target.value.trim();
    localStorage.setItem("onair.liveEvent", S.liveEvent);
    renderLive();
  });
  for (const b of document.querySelectorAll("[data-state]")) {
    b.addEventListener("click", () =>
      control(
        "control/state",
        {
          eventId: S.liveEvent,
          state: b.dataset.state,
          newInstance: $("#live-new-instance").checked,
        },
        (o) => driveOutcome(o),
      ).then(() => {
        $("#live-new-instance").checked = false;
      }),
    );
  }
  $("#live-join").addEventListener("click", () => {
    const names = $("#live-names")
      .value.split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (!names.length) return toast("Type one or more names, separated by commas.");
    control(
      "control/attendees",
      { eventId: S.liveEvent, join: names },
      (o) =>
        `${o.joined} joined${o.alreadyPresent ? ` (${o.alreadyPresent} already here, not counted again)` : ""}, ${o.delivered} delivered, ${o.activeAttendeeCount} present`,
    );
  });
  for (const b of document.querySelectorAll("[data-role]")) {
    b.addEventListener("click", () =>
      control(
        "control/attendees",
        { eventId: S.liveEvent, role: b.dataset.role },
        (o) => `${o.joined} ${b.dataset.role}s joined, ${o.activeAttendeeCount} present`,
      ),
    );
  }
  $("#live-burst").addEventListener("click", () =>
    control(
      "control/attendees",
      { eventId: S.liveEvent, count: Number($("#live-count").value) },
      (o) =>
        `burst: ${o.joined} joined, ${o.delivered} delivered, ${o.failed} failed, ${o.activeAttendeeCount} present`,
    ),
  );
  $("#live-leave").addEventListener("click", () =>
    control(
      "control/attendees",
      { eventId: S.liveEvent, leave: Number($("#live-leave-count").value) },
      (o) => `${o.left} left, ${o.activeAttendeeCount} present`,
    ),
  );
  $("#fault-service").addEventListener("change", () => {
    $("#fault-error").disabled = $("#fault-service").value !== "relay";
  });
  $("#fault-add").addEventListener("click", () => {
    const service = $("#fault-service").value;
    const error = $("#fault-error").value;
    const status = Number($("#fault-status").value);
    control(
      "control/faults",
      {
        service,
        ...(service === "relay" && error ? { error } : { status: status || 503 }),
        times: Number($("#fault-times").value) || 1,
      },
      () =>
        `next ${Number($("#fault-times").value) || 1} ${service} call(s) fail with ${service === "relay" && error ? error : status || 503}`,
    );
  });
  $("#fault-clear").addEventListener("click", () =>
    control("control/faults", undefined, () => "faults cleared", "DELETE"),
  );
}

// ---------------------------------------------------------------- Slack calls

const calls = { since: 0, list: [], busy: false };

async function pollCalls() {
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

// ---------------------------------------------------------------- modals

function modalValues(view) {
  if (!S.values[view.id]) S.values[view.id] = {};
  return S.values[view.id];
}

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

function renderModal() {
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

// ---------------------------------------------------------------- start

async function start() {
  $("#acting").addEventListener("change", (e) => {
    S.me = e.target.value;
    localStorage.setItem("onair.me", S.me);
    S.etag = null;
    S.feedKey = null;
    S.modalKey = undefined;
    S.homeKey = null;
    S.threadKey = null;
    if (S.place === "home") api("home", { user: S.me }).catch((er) => toast(er.message));
    refresh();
  });
  $("#tab-live").addEventListener("click", () => {
    S.right = "live";
    renderRight();
  });
  $("#tab-calls").addEventListener("click", () => {
    S.right = "calls";
    renderRight();
    pollCalls();
  });
  $("#tab-thread").addEventListener("click", () => {
    if (!S.thread) return;
    S.right = "thread";
    S.threadKey = null;
    renderRight();
  });
  wireLive();
  // Escape closes the top modal, as in Slack.
  document.addEventListener("keydown", (e) => {
    if (e.key !== "Escape" || document.querySelector(".confirm-overlay")) return;
    const top = S.state?.modals?.at(-1);
    if (top) api("close", { user: S.me, view_id: top.id }).catch((er) => toast(er.message));
  });
  try {
    S.meta = await (await fetch("/playground/api/meta")).json();
    fill(
      $("#fault-error"),
      h("option", { value: "" }, "HTTP status only"),
      (S.meta.relayErrors ?? []).map((n) => h("option", { value: n }, n)),
    );
    $("#persist-note").textContent = S.meta.persistence
      ? `Workspace and the sandbox's events kept in ${S.meta.persistence.dir}/ across restarts.`
      : "This workspace is not kept across restarts.";
  } catch {
    // the page still works without the meta
  }
  await refresh();
  if (S.place === "home") api("home", { user: S.me }).catch(() => {});
  // A hidden tab need not poll; it catches up when shown.
  setInterval(() => {
    if (!document.hidden) {
      refresh();
      pollCalls();
    }
  }, POLL_MS);
  document.addEventListener("visibilitychange", () => {
    if (!document.hidden) refresh();
  });
}

start();
