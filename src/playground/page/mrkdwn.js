// mrkdwn as Slack's client draws it: formatting, mentions, links, <!date> tokens, emoji names.
import { formatSlackDate } from "./dates.js";
import { h } from "./dom.js";

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

export function userLabel(ctx, id) {
  const u = ctx.users.get(id);
  return u ? u.real_name || u.name : id;
}

export function channelLabel(ctx, id, given) {
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
export function safeUrl(url) {
  return typeof url === "string" && /^(https?:|mailto:|tel:)/i.test(url) ? url : undefined;
}

export const plain = (obj) =>
  obj && typeof obj === "object" ? String(obj.text ?? "") : String(obj ?? "");
