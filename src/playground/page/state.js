// The page's state and its one poll: what the acting person sees (S), the calls to the server,
// and a redraw after each. The panels draw from S; app.js registers the one redraw (onRender), so
// no panel imports the page that imports it.
import { h } from "./dom.js";

export const POLL_MS = 700;
export const $ = (sel) => document.querySelector(sel);

export const S = {
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

let renderer = () => {};
/** The whole page's redraw; every part is drawn again only when what it shows changed. */
export function onRender(fn) {
  renderer = fn;
}
export function render() {
  renderer();
}

export async function api(path, body, method = "POST") {
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

export function toast(text, kind = "error") {
  const t = h("div", { class: `toast ${kind}`, role: "status" }, text);
  $("#toasts").append(t);
  setTimeout(() => t.remove(), 6000);
}

let polling = false;
let again = false;
export async function refresh() {
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
