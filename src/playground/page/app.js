// The playground client: polls the workspace as the acting user sees it and sends what they
// do to /playground/api/… (the server signs it as Slack would and hands it to the app).
// Plain ES modules by panel, served as they are (no build step): state.js holds the state and the
// poll; each panel draws from it; this file wires them together and starts the page.
import { pollCalls } from "./calls.js";
import { fill, h } from "./dom.js";
import { renderHome } from "./home.js";
import { renderLive, wireLive } from "./live.js";
import { renderChannel } from "./messages.js";
import { renderModal } from "./modal.js";
import { actAs, renderSidebar, renderTop, switchWorkspace } from "./sidebar.js";
import { $, api, onRender, POLL_MS, refresh, S, toast } from "./state.js";
import { renderSteps } from "./steps.js";
import { renderThread } from "./thread-pane.js";
import { renderFlexpane, renderWorkObjectsSwitch, wireWorkObjects } from "./workobjects.js";

function render() {
  if (!S.state) return;
  renderTop();
  renderSidebar();
  renderMain();
  renderRight();
  renderModal();
  renderWorkObjectsSwitch();
}

function renderMain() {
  const main = $("#main");
  if (S.place === "home") renderHome(main);
  else renderChannel(main);
}

function renderRight() {
  $("#tab-live").classList.toggle("active", S.right === "live");
  $("#tab-thread").classList.toggle("active", S.right === "thread");
  $("#tab-thread").disabled = !S.thread;
  $("#tab-calls").classList.toggle("active", S.right === "calls");
  $("#tab-flexpane").classList.toggle("active", S.right === "flexpane");
  $("#tab-steps").classList.toggle("active", S.right === "steps");
  $("#live").hidden = S.right !== "live";
  $("#calls").hidden = S.right !== "calls";
  $("#flexpane").hidden = S.right !== "flexpane";
  $("#steps").hidden = S.right !== "steps";
  const pane = $("#thread");
  pane.hidden = S.right !== "thread";
  renderLive();
  renderThread(pane);
  renderFlexpane($("#flexpane"));
  renderSteps();
}

async function start() {
  onRender(render);
  $("#acting").addEventListener("change", (e) => actAs(e.target.value));
  $("#workspace").addEventListener("change", (e) => switchWorkspace(e.target.value));
  $("#tab-live").addEventListener("click", () => {
    S.right = "live";
    renderRight();
  });
  $("#tab-calls").addEventListener("click", () => {
    S.right = "calls";
    renderRight();
    pollCalls();
  });
  $("#tab-flexpane").addEventListener("click", () => {
    S.right = "flexpane";
    S.flexpaneKey = null;
    renderRight();
  });
  $("#tab-steps").addEventListener("click", () => {
    S.right = "steps";
    renderRight();
  });
  $("#tab-thread").addEventListener("click", () => {
    if (!S.thread) return;
    S.right = "thread";
    S.threadKey = null;
    renderRight();
  });
  wireLive();
  wireWorkObjects();
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
