// The top bar (who acts, in which zone) and the sidebar (the app, the channels, what is unread).
import { avatar } from "./context.js";
import { fill, h } from "./dom.js";
import { $, api, refresh, render, S, toast } from "./state.js";

export function renderTop() {
  const sel = $("#acting");
  const st = S.state;
  // In an org (two workspaces), the people of the workspace looked at; else everyone.
  const workspaces = st.workspaces ?? [st.team];
  const people = st.users.filter((u) => !u.is_bot && memberOf(u, st.team.id, workspaces));
  const peopleKey = people.map((u) => u.id).join(" ");
  if (sel.dataset.key !== peopleKey) {
    sel.dataset.key = peopleKey;
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
  $("#team").textContent = st.team.name;
  $("#ws-name").textContent = st.team.name;
  const wsSel = $("#workspace");
  $("#workspace-pick").hidden = workspaces.length < 2;
  const wsKey = workspaces.map((w) => `${w.id}:${w.name}`).join(" ");
  if (wsSel.dataset.key !== wsKey) {
    wsSel.dataset.key = wsKey;
    fill(wsSel, ...workspaces.map((w) => h("option", { value: w.id }, w.name)));
  }
  wsSel.value = st.team.id;
}

function memberOf(u, team, workspaces) {
  return workspaces.length < 2 || (u.workspaces ?? [u.team_id]).includes(team);
}

/**
 * Looks at (and acts in) another workspace of the org: the acting person moves there when they
 * are a member of it, else the person last acting there (or its first person) acts.
 */
export async function switchWorkspace(team) {
  const st = S.state;
  if (!st || team === st.team.id) return;
  localStorage.setItem(`onair.me.${st.team.id}`, S.me);
  const me = st.users.find((u) => u.id === S.me);
  if (me && memberOf(me, team, st.workspaces)) {
    await moveTo(S.me, team);
    return actAs(S.me, team);
  }
  const people = st.users.filter((u) => !u.is_bot && memberOf(u, team, st.workspaces));
  const last = localStorage.getItem(`onair.me.${team}`);
  const next = people.find((u) => u.id === last) ?? people[0];
  if (next) await actAs(next.id, team);
}

async function moveTo(user, team) {
  try {
    await api("workspace", { user, team });
  } catch (e) {
    toast(e.message);
  }
}

/**
 * Someone else acts: what the page showed for the last one is drawn again for them. A member of
 * several workspaces picked while looking at one acts in that one.
 */
export async function actAs(user, team = S.state?.team.id) {
  const u = S.state?.users.find((x) => x.id === user);
  if (u && team && u.team_id !== team && (u.workspaces ?? []).includes(team)) {
    await moveTo(user, team);
  }
  S.me = user;
  localStorage.setItem("onair.me", S.me);
  S.etag = null;
  S.feedKey = null;
  S.modalKey = undefined;
  S.homeKey = null;
  S.threadKey = null;
  if (S.place === "home") api("home", { user: S.me }).catch((er) => toast(er.message));
  refresh();
}

export function renderSidebar() {
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

export function go(place) {
  S.place = place;
  S.thread = null;
  if (S.right === "thread") S.right = "live";
  localStorage.setItem("onair.place", place);
  S.feedKey = null;
  if (place === "home") api("home", { user: S.me }).catch((e) => toast(e.message));
  render();
}

export function currentChannel() {
  const st = S.state;
  if (S.place === "home") return null;
  if (S.place === "dm") return st.channels.find((c) => c.is_im && c.user === S.me) ?? null;
  return st.channels.find((c) => c.id === S.place) ?? null;
}
