// Dates in the viewer's zone: Slack's <!date> tokens and the date-time pickers' wall times.
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
