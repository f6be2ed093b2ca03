// The Workflow Builder panel: runs one of the app's custom steps with the inputs typed, as a
// workflow would (function_executed), and shows its completion: the outputs, or the sentence the
// step failed with. The form is built from the steps as the manifest declares them (meta.steps):
// a timestamp is a date and time in the acting person's zone, a user or channel is picked.
import { ctxBase } from "./context.js";
import { epochToLocalInput, formatSlackDate, localInputToEpoch } from "./dates.js";
import { fill, h } from "./dom.js";
import { $, api, S } from "./state.js";

const runs = [];
let formKey = null;
let runsKey = null;
let eventsKey = null;

function inputFor(name, p, ctx) {
  const id = `step-in-${name}`;
  const common = { id, name, "data-input": name, required: p.is_required };
  switch (p.type) {
    case "slack#/types/timestamp": {
      // Tomorrow at the next full hour, the end an hour later: a start the step accepts.
      const hour = Math.ceil(Date.now() / 3_600_000) * 3600 + 86_400;
      return h("input", {
        ...common,
        type: "datetime-local",
        value: epochToLocalInput(name === "end" ? hour + 3600 : hour, ctx.tz),
      });
    }
    case "slack#/types/user_id":
      return h(
        "select",
        common,
        p.is_required ? null : h("option", { value: "" }, "(none)"),
        [...ctx.users.values()]
          .filter((u) => !u.is_bot)
          .map((u) => h("option", { value: u.id, selected: u.id === S.me }, u.real_name || u.name)),
      );
    case "slack#/types/channel_id":
      return h(
        "select",
        common,
        p.is_required ? null : h("option", { value: "" }, "(none)"),
        [...ctx.channels.values()]
          .filter((c) => !c.is_im)
          .map((c) => h("option", { value: c.id }, `#${c.name}`)),
      );
    default:
      return name === "event_id"
        ? h("input", { ...common, type: "text", list: "step-events", autocomplete: "off" })
        : h("input", { ...common, type: "text", autocomplete: "off" });
  }
}

/** The inputs as Workflow Builder sends them; an optional one left empty is left out. */
function inputsOf(def, form, tz) {
  const inputs = {};
  for (const [name, p] of Object.entries(def.input_parameters)) {
    const raw = form.querySelector(`[data-input="${name}"]`)?.value ?? "";
    if (raw === "") continue;
    if (p.type === "slack#/types/timestamp") {
      const sec = localInputToEpoch(raw, tz);
      if (sec !== null && sec !== undefined && Number.isFinite(sec)) inputs[name] = sec;
    } else inputs[name] = raw;
  }
  return inputs;
}

function outputValue(p, v, tz) {
  if (p?.type === "slack#/types/timestamp" && typeof v === "number") {
    return h("time", { class: "slack-date" }, formatSlackDate(v, "{date_short_pretty} {time}", tz));
  }
  return String(v);
}

function runView(r, tz) {
  const def = S.meta?.steps?.[r.step];
  return h(
    "div",
    { class: `step-run ${r.state ?? "refused"}`, "data-testid": "step-result" },
    h(
      "div",
      { class: "step-run-head" },
      h("code", {}, r.step),
      h("span", { class: `state-pill ${r.state ?? "failed"}` }, r.state ?? "not run"),
    ),
    r.outputs
      ? h(
          "dl",
          { class: "step-outputs" },
          Object.entries(r.outputs).map(([k, v]) => [
            h("dt", {}, def?.output_parameters?.[k]?.title ?? k),
            h("dd", { "data-output": k }, outputValue(def?.output_parameters?.[k], v, tz)),
          ]),
        )
      : null,
    r.error ? h("div", { class: "step-error", role: "alert" }, r.error) : null,
  );
}

function renderRuns() {
  const tz = ctxBase().tz;
  const key = JSON.stringify([runs, tz]);
  if (runsKey === key) return;
  runsKey = key;
  fill(
    $("#step-results"),
    runs.length === 0
      ? h("p", { class: "muted small" }, "Completions show here, newest first.")
      : [...runs].reverse().map((r) => runView(r, tz)),
  );
}

async function run(step, form) {
  const def = S.meta.steps[step];
  const tz = ctxBase().tz;
  const entry = { step };
  try {
    const out = await api("step", { callback_id: step, inputs: inputsOf(def, form, tz) });
    Object.assign(entry, out);
    if (out.state === "running") entry.error = "Still running: the app has not completed it yet.";
    // The next step of a workflow would read the event id: offer it to the attendance step.
    if (out.outputs?.event_id) S.stepEventId = String(out.outputs.event_id);
  } catch (e) {
    // Inputs Workflow Builder would not send (a required one empty): said, nothing run.
    entry.error = e.message;
  }
  runs.push(entry);
  renderSteps();
}

/** The step panel: the form (built again only when the step, person or directory changed). */
export function renderSteps() {
  if (S.right !== "steps" || !S.state) return;
  const steps = S.meta?.steps ?? {};
  const ctx = ctxBase();
  const events = S.state.events ?? [];
  const eKey = JSON.stringify(events.map((e) => [e.eventId, e.title]));
  if (eventsKey !== eKey) {
    eventsKey = eKey;
    fill(
      $("#step-events"),
      events.map((e) => h("option", { value: e.eventId }, e.title)),
    );
  }
  const step = S.step ?? Object.keys(steps)[0];
  const key = JSON.stringify([
    step,
    S.me,
    ctx.tz,
    S.state.users,
    S.state.channels.map((c) => c.id),
  ]);
  if (formKey !== key) {
    formKey = key;
    const def = steps[step];
    const pick = h(
      "select",
      {
        id: "step-pick",
        "data-testid": "step-pick",
        onchange: (e) => {
          S.step = e.target.value;
          renderSteps();
        },
      },
      Object.entries(steps).map(([id, d]) =>
        h("option", { value: id, selected: id === step }, `${d.title} (${id})`),
      ),
    );
    const form = def
      ? h(
          "form",
          {
            class: "step-form",
            "data-testid": "step-form",
            onsubmit: (e) => {
              e.preventDefault();
              run(step, e.target);
            },
          },
          h("p", { class: "muted small" }, def.description),
          Object.entries(def.input_parameters).map(([name, p]) =>
            h(
              "label",
              { class: "field", title: p.description },
              p.type === "slack#/types/timestamp" ? `${p.title} (${ctx.tz})` : p.title,
              p.is_required ? null : h("span", { class: "optional" }, " (optional)"),
              inputFor(name, p, ctx),
            ),
          ),
          h(
            "button",
            { class: "bk-button primary", type: "submit", "data-testid": "step-run" },
            "Run step",
          ),
        )
      : h("p", { class: "muted" }, "This app declares no steps.");
    fill($("#step-form-slot"), h("label", { class: "field" }, "Step", pick), form);
  }
  const idInput = $('#step-form-slot [data-input="event_id"]');
  if (idInput && S.stepEventId && idInput.value === "") idInput.value = S.stepEventId;
  renderRuns();
}
