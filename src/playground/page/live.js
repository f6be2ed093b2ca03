// The live-event panel: drive an event at the sandbox (states, attendees, faults) and read what
// the app made of it.
import { ctxBase } from "./context.js";
import { fill, h } from "./dom.js";
import { $, api, S, toast } from "./state.js";

export function renderLive() {
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
  // In the acting person's zone, as every other time on the page, not the browser's: switching
  // who acts draws the lines again.
  const tz = ctxBase().tz;
  const key = `${S.log.length} ${tz}`;
  if (log.dataset.key !== key) {
    log.dataset.key = key;
    const clock = new Intl.DateTimeFormat("en-US", {
      timeZone: tz,
      hour: "numeric",
      minute: "2-digit",
      second: "2-digit",
    });
    fill(
      log,
      ...S.log
        .slice(-8)
        .reverse()
        .map((l) =>
          h(
            "div",
            { class: `log-line ${l.ok ? "" : "bad"}` },
            h("time", { datetime: new Date(l.at).toISOString(), title: tz }, clock.format(l.at)),
            ` ${l.text}`,
          ),
        ),
    );
  }
}

function logLine(text, ok = true) {
  S.log.push({ at: Date.now(), text, ok });
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

export function wireLive() {
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
      { eventId: S.liveEvent, join: names, team: S.state.team.id },
      (o) =>
        `${o.joined} joined${o.alreadyPresent ? ` (${o.alreadyPresent} already here, not counted again)` : ""}, ${o.delivered} delivered, ${o.activeAttendeeCount} present`,
    );
  });
  for (const b of document.querySelectorAll("[data-role]")) {
    b.addEventListener("click", () =>
      control(
        "control/attendees",
        { eventId: S.liveEvent, role: b.dataset.role, team: S.state.team.id },
        (o) => `${o.joined} ${b.dataset.role}s joined, ${o.activeAttendeeCount} present`,
      ),
    );
  }
  $("#live-burst").addEventListener("click", () =>
    control(
      "control/attendees",
      { eventId: S.liveEvent, count: Number($("#live-count").value), team: S.state.team.id },
      (o) =>
        `burst: ${o.joined} joined, ${o.delivered} delivered, ${o.failed} failed, ${o.activeAttendeeCount} present`,
    ),
  );
  $("#live-leave").addEventListener("click", () =>
    control(
      "control/attendees",
      { eventId: S.liveEvent, leave: Number($("#live-leave-count").value), team: S.state.team.id },
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
