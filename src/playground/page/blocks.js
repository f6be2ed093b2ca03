// Why this file is long: it renders every Block Kit block and element the app can send, one
// small function each, so the playground shows what Slack shows.
// Block Kit and mrkdwn, drawn as Slack's client draws them. Plain DOM, no dependencies.
// ctx: { users: Map, channels: Map, tz, surface: "message"|"modal"|"home",
//        value(blockId, actionId) → state|undefined, set(blockId, actionId, state),
//        act(element, block, state), errors: {block_id: text} }
import {
  allOptions,
  initialState,
  isEmptyState,
  selectedValues,
  stateFromValues,
  stateShape,
} from "./view-state.js";

export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k === "html") el.innerHTML = v;
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat(Infinity)) {
    if (c === undefined || c === null || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

/** Children as given to h(): nested arrays flattened, the absent ones dropped. */
function present(children) {
  return children
    .flat(Number.POSITIVE_INFINITY)
    .filter((c) => c !== undefined && c !== null && c !== false);
}

/** replaceChildren that takes nested arrays, as h() does. */
export function fill(el, ...children) {
  el.replaceChildren(...present(children));
}

/**
 * Makes `children` (nodes, nested arrays as h() takes) the children of `el`, in order, moving or
 * removing only what is not already in place: a node that stays where it is is never taken out,
 * so a click on it (button down, then up) is not lost to a redraw of what is around it.
 */
export function arrange(el, ...children) {
  const want = present(children).map((c) =>
    typeof c === "string" ? document.createTextNode(c) : c,
  );
  const wanted = new Set(want);
  for (const c of [...el.childNodes]) if (!wanted.has(c)) c.remove();
  // What is left is in `want` already; new nodes go in before it, kept ones stay put unless
  // their order changed.
  let cursor = el.firstChild;
  for (const node of want) {
    if (node === cursor) {
      cursor = cursor.nextSibling;
      continue;
    }
    el.insertBefore(node, cursor);
  }
}

/**
 * A list drawn by key: `entries` are `{ key, make }`, where the key says everything the node
 * shows. A key drawn last time keeps its node (from `cache`, a Map the caller holds across
 * draws); only new keys are made. Returns the nodes, in order, for arrange(); `cache` then holds
 * exactly these keys.
 */
export function keyedNodes(entries, cache) {
  const nodes = [];
  const kept = new Map();
  for (const { key, make } of entries) {
    // A key given twice gets a node of its own the second time (a node has one place).
    const node = kept.has(key) ? make() : (cache.get(key) ?? make());
    if (!kept.has(key)) kept.set(key, node);
    nodes.push(node);
  }
  cache.clear();
  for (const [k, n] of kept) cache.set(k, n);
  return nodes;
}

const EMOJI = {
  white_check_mark: "✅",
  grey_question: "❔",
  grey_exclamation: "❕",
  lock_with_ink_pen: "🔏",
  no_entry_sign: "🚫",
  large_orange_circle: "🟠",
  large_purple_circle: "🟣",
  heavy_check_mark: "✔️",
  x: "❌",
  warning: "⚠️",
  no_entry: "⛔",
  red_circle: "🔴",
  large_green_circle: "🟢",
  large_yellow_circle: "🟡",
  white_circle: "⚪",
  large_blue_circle: "🔵",
  black_circle: "⚫",
  calendar: "📆",
  date: "📅",
  spiral_calendar_pad: "🗓️",
  clock1: "🕐",
  alarm_clock: "⏰",
  stopwatch: "⏱️",
  hourglass: "⌛",
  hourglass_flowing_sand: "⏳",
  busts_in_silhouette: "👥",
  bust_in_silhouette: "👤",
  wave: "👋",
  tada: "🎉",
  satellite: "📡",
  satellite_antenna: "📡",
  studio_microphone: "🎙️",
  microphone: "🎤",
  movie_camera: "🎥",
  film_frames: "🎞️",
  tv: "📺",
  link: "🔗",
  lock: "🔒",
  unlock: "🔓",
  key: "🔑",
  closed_lock_with_key: "🔐",
  bell: "🔔",
  no_bell: "🔕",
  information_source: "ℹ️",
  arrow_right: "➡️",
  arrow_forward: "▶️",
  door: "🚪",
  rocket: "🚀",
  gear: "⚙️",
  pencil: "📝",
  pencil2: "✏️",
  memo: "📝",
  wastebasket: "🗑️",
  stop_button: "⏹️",
  double_vertical_bar: "⏸️",
  eyes: "👀",
  chart_with_upwards_trend: "📈",
  bar_chart: "📊",
  mag: "🔍",
  email: "📧",
  envelope: "✉️",
  phone: "📞",
  telephone_receiver: "📞",
  globe_with_meridians: "🌐",
  repeat: "🔁",
  zap: "⚡",
  sparkles: "✨",
  speech_balloon: "💬",
  thread: "🧵",
  loud_sound: "🔊",
  mute: "🔇",
  sound: "🔉",
  raising_hand: "🙋",
  raised_hand: "✋",
  runner: "🏃",
  person_running: "🏃",
  walking: "🚶",
  outbox_tray: "📤",
  inbox_tray: "📥",
  ticket: "🎫",
  admission_tickets: "🎟️",
  clipboard: "📋",
  pushpin: "📌",
  round_pushpin: "📍",
  star: "⭐",
  fire: "🔥",
  hammer_and_wrench: "🛠️",
  shield: "🛡️",
  construction: "🚧",
  checkered_flag: "🏁",
  slightly_smiling_face: "🙂",
  smile: "😄",
  thinking_face: "🤔",
  question: "❓",
  exclamation: "❗",
  heavy_plus_sign: "➕",
  heavy_minus_sign: "➖",
  arrow_up: "⬆️",
  arrow_down: "⬇️",
  arrows_counterclockwise: "🔄",
  crystal_ball: "🔮",
  robot_face: "🤖",
  books: "📚",
  book: "📖",
  label: "🏷️",
  lower_left_fountain_pen: "🖋️",
  pager: "📟",
  red_square: "🟥",
  green_square: "🟩",
  yellow_square: "🟨",
  black_square_button: "🔲",
  hand: "✋",
  point_right: "👉",
  new: "🆕",
  sos: "🆘",
  recycle: "♻️",
  mega: "📣",
  loudspeaker: "📢",
  headphones: "🎧",
  video_camera: "📹",
  camera: "📷",
  signal_strength: "📶",
  electric_plug: "🔌",
  hourglass_done: "⌛",
  spiral_note_pad: "🗒️",
  page_facing_up: "📄",
};

export function emoji(name, unicode) {
  if (unicode) {
    try {
      return String.fromCodePoint(...unicode.split("-").map((u) => Number.parseInt(u, 16)));
    } catch {
      // fall through to the name
    }
  }
  return EMOJI[name] ?? `:${name}:`;
}

const esc = (s) =>
  String(s)
    .replace(/&(?!(amp|lt|gt|quot|#\d+);)/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
const attr = (s) => String(s).replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");

// ---------------------------------------------------------------- dates in the viewer's zone

function parts(ms, tz, opts) {
  const out = {};
  for (const p of new Intl.DateTimeFormat("en-US", { timeZone: tz, ...opts }).formatToParts(ms)) {
    out[p.type] = p.value;
  }
  return out;
}

function dayNumber(ms, tz) {
  const p = parts(ms, tz, { year: "numeric", month: "numeric", day: "numeric" });
  return Date.UTC(Number(p.year), Number(p.month) - 1, Number(p.day)) / 86_400_000;
}

function ordinal(n) {
  const s = ["th", "st", "nd", "rd"];
  const v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}

/** Slack's <!date> tokens, in the viewer's time zone. */
export function formatSlackDate(sec, format, tz, nowMs = Date.now()) {
  const ms = sec * 1000;
  const f = (opts) => new Intl.DateTimeFormat("en-US", { timeZone: tz, ...opts }).format(ms);
  const p = parts(ms, tz, { year: "numeric", month: "long", day: "numeric", weekday: "long" });
  const pShort = parts(ms, tz, { month: "short" });
  const date = `${p.month} ${ordinal(Number(p.day))}, ${p.year}`;
  const dateShort = `${pShort.month} ${p.day}, ${p.year}`;
  const dateLong = `${p.weekday}, ${date}`;
  const diff = dayNumber(ms, tz) - dayNumber(nowMs, tz);
  const pretty = (fallback) =>
    diff === 0 ? "today" : diff === 1 ? "tomorrow" : diff === -1 ? "yesterday" : fallback;
  const agoSec = Math.round((nowMs - ms) / 1000);
  const abs = Math.abs(agoSec);
  const unit =
    abs < 60
      ? [abs, "second"]
      : abs < 3600
        ? [Math.round(abs / 60), "minute"]
        : abs < 86400
          ? [Math.round(abs / 3600), "hour"]
          : [Math.round(abs / 86400), "day"];
  const ago =
    agoSec >= 0
      ? `${unit[0]} ${unit[1]}${unit[0] === 1 ? "" : "s"} ago`
      : `in ${unit[0]} ${unit[1]}${unit[0] === 1 ? "" : "s"}`;
  const tokens = {
    date_num: `${f({ year: "numeric" })}-${f({ month: "2-digit" })}-${f({ day: "2-digit" })}`,
    date,
    date_short: dateShort,
    date_long: dateLong,
    date_pretty: pretty(date),
    date_short_pretty: pretty(dateShort),
    date_long_pretty: pretty(dateLong),
    time: f({ hour: "numeric", minute: "2-digit" }),
    time_secs: f({ hour: "numeric", minute: "2-digit", second: "2-digit" }),
    ago,
  };
  let out = format.replace(/\{(\w+)\}/g, (m, k) => tokens[k] ?? m);
  // Slack capitalises a relative word that opens the string.
  out = out.replace(/^(today|tomorrow|yesterday)/, (w) => w[0].toUpperCase() + w.slice(1));
  return out;
}

/** "YYYY-MM-DDTHH:mm" wall time in tz ⇄ epoch seconds: what the date-time pickers show. */
export function epochToLocalInput(sec, tz) {
  const p = parts(sec * 1000, tz, {
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    hourCycle: "h23",
  });
  return `${p.year}-${p.month}-${p.day}T${p.hour}:${p.minute}`;
}

function offsetMs(ms, tz) {
  const p = parts(ms, tz, {
    year: "numeric",
    month: "numeric",
    day: "numeric",
    hour: "numeric",
    minute: "numeric",
    second: "numeric",
    hourCycle: "h23",
  });
  const asUtc = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  return asUtc - Math.floor(ms / 1000) * 1000;
}

export function localInputToEpoch(text, tz) {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})/.exec(text);
  if (!m) return null;
  const wall = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5]);
  // The zone's offsets either side of any change that day; a wall time maps to one instant,
  // two (the repeated hour when clocks go back: the earlier, as Temporal's "compatible"), or
  // none (the hour skipped when clocks go forward: read with the offset before, so later).
  const before = offsetMs(wall - 86_400_000, tz);
  const after = offsetMs(wall + 86_400_000, tz);
  const wallOf = (ms) => epochToLocalInput(ms / 1000, tz);
  const want = text.slice(0, 16);
  const valid = [wall - before, wall - after].filter((ms) => wallOf(ms) === want);
  const ms = valid.length > 0 ? Math.min(...valid) : wall - before;
  return Math.floor(ms / 1000);
}

// ---------------------------------------------------------------- mrkdwn

function userLabel(ctx, id) {
  const u = ctx.users.get(id);
  return u ? u.real_name || u.name : id;
}

function channelLabel(ctx, id, given) {
  const c = ctx.channels.get(id);
  return c && !c.is_im ? c.name : given || id;
}

function token(inner, ctx) {
  const bar = inner.indexOf("|");
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? undefined : inner.slice(bar + 1);
  if (target.startsWith("@")) {
    const id = target.slice(1);
    return `<span class="mention${id === ctx.me ? " me" : ""}" data-user="${attr(id)}">@${esc(userLabel(ctx, id))}</span>`;
  }
  if (target.startsWith("#")) {
    return `<span class="mention channel">#${esc(channelLabel(ctx, target.slice(1), label))}</span>`;
  }
  if (target.startsWith("!subteam^")) {
    return `<span class="mention">@${esc(label ?? target.slice(9))}</span>`;
  }
  if (target.startsWith("!date^")) {
    const [, epoch, format, link] = target.split("^");
    const text = formatSlackDate(Number(epoch), format ?? "{date}", ctx.tz);
    const title = `${label ?? ""} (shown in ${ctx.tz})`.trim();
    const inner2 = `<time class="slack-date" datetime="${new Date(Number(epoch) * 1000).toISOString()}" title="${attr(title)}">${esc(text)}</time>`;
    return link ? `<a href="${attr(link)}" target="_blank" rel="noopener">${inner2}</a>` : inner2;
  }
  if (target.startsWith("!")) {
    const word = target.slice(1);
    return `<span class="mention broadcast">@${esc(label ?? word)}</span>`;
  }
  if (/^(https?:|mailto:|tel:)/i.test(target)) {
    return `<a href="${attr(target)}" target="_blank" rel="noopener">${esc(label ?? target)}</a>`;
  }
  return esc(`<${inner}>`);
}

function inline(text) {
  return text
    .replace(/(^|[^\w*])\*(?!\s)([^*\n]+?)\*(?!\w)/g, "$1<b>$2</b>")
    .replace(/(^|[^\w_])_(?!\s)([^_\n]+?)_(?!\w)/g, "$1<i>$2</i>")
    .replace(/(^|[^\w~])~(?!\s)([^~\n]+?)~(?!\w)/g, "$1<s>$2</s>")
    .replace(/:([a-z0-9_+-]+):/g, (m, name) => (EMOJI[name] ? EMOJI[name] : m));
}

export function mrkdwnHtml(text, ctx) {
  const pieces = String(text ?? "").split(/```/);
  let html = "";
  pieces.forEach((piece, i) => {
    if (i % 2 === 1) {
      html += `<pre>${esc(piece.replace(/^\n/, ""))}</pre>`;
      return;
    }
    let out = "";
    // Inline code is literal: no tokens, no formatting inside it.
    piece.split(/(`[^`\n]+`)/).forEach((seg, j) => {
      if (j % 2 === 1) {
        out += `<code>${esc(seg.slice(1, -1))}</code>`;
        return;
      }
      let last = 0;
      for (const m of seg.matchAll(/<([^<>\n]+)>/g)) {
        out += inline(esc(seg.slice(last, m.index)));
        out += token(m[1], ctx);
        last = m.index + m[0].length;
      }
      out += inline(esc(seg.slice(last)));
    });
    const lines = out
      .split("\n")
      .map((line) =>
        line.startsWith("&gt;")
          ? `<span class="quote">${line.replace(/^&gt;\s?/, "")}</span>`
          : line,
      );
    html += lines.join("<br>").replace(/<\/span><br>(?=<span class="quote">)/g, "</span>");
  });
  return html;
}

export function textNode(obj, ctx, cls) {
  if (obj === undefined || obj === null) return null;
  if (typeof obj === "string") return h("span", { class: cls, html: mrkdwnHtml(obj, ctx) });
  if (obj.type === "mrkdwn") {
    return h("span", { class: `mrkdwn ${cls ?? ""}`, html: mrkdwnHtml(obj.text, ctx) });
  }
  const t =
    obj.emoji === false
      ? obj.text
      : String(obj.text ?? "").replace(/:([a-z0-9_+-]+):/g, (m, n) => EMOJI[n] ?? m);
  return h("span", { class: cls }, t);
}

/** Only web, mail and phone links open: a message must not run script in the page. */
function safeUrl(url) {
  return typeof url === "string" && /^(https?:|mailto:|tel:)/i.test(url) ? url : undefined;
}

const plain = (obj) =>
  obj && typeof obj === "object" ? String(obj.text ?? "") : String(obj ?? "");

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

// The view-state table (how each element's value appears in view.state) is the emulator's own,
// served from the package beside this file: initialState, isEmptyState, optionObject, … .
export { initialState, isEmptyState };

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
