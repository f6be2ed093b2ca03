/**
 * Why this file is long: it is the playground page's whole API, one short handler per route
 * (state, composer, actions, the live panel, files) in one switch a reader scans in order; what
 * the bodies may be is in requests.ts, the workspace as the page sees it in workspace-view.ts.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import {
  DriverError,
  fileJson,
  fileState,
  type Json,
  SlackApiError,
  type SlackEmulator,
} from "@onair/slack-emulator";
import type { z } from "zod";
import type { OnAirApp } from "../app.ts";
import type { AttendanceFigures } from "../deps.ts";
import { emailsOf } from "../domain/people.ts";
import { eventOf } from "../domain/subscription.ts";
import { subscriptionOf } from "../domain/subscriptions.ts";
import { sendJson } from "../http/body.ts";
import { COMMAND, DEFAULT_JOIN_HOST, SHORTCUTS, SUBCOMMANDS } from "../ids.ts";
import { liveRepo } from "../live/live-record.ts";
import { HELP } from "../slack/commands/help.ts";
import { STEP_DEFINITIONS } from "../slack/functions/definitions.ts";
import { RELAY_ERROR_NAMES } from "../upstream/relay/catalog.ts";
import { moveTo, teamOf, workspacesOf } from "./org.ts";
import {
  ActionBody,
  AttendeesControl,
  BadRequest,
  CloseBody,
  CommandBody,
  FaultControl,
  FlexpaneActionBody,
  HomeBody,
  MessageBody,
  OpenWorkObjectBody,
  parse,
  readJson,
  ShortcutBody,
  StateControl,
  SubmitBody,
  WorkObjectsBody,
  WorkspaceBody,
} from "./requests.ts";
import { runPlaygroundStep, StepBody } from "./steps.ts";
import {
  flexpaneOf,
  openFlexpane,
  pressFlexpane,
  switchWorkObjects,
  workObjectsOn,
} from "./work-objects.ts";
import { type InstanceView, latestInstance, presentGuids, stateFor } from "./workspace-view.ts";

/**
 * The playground page and its JSON API under /playground: what the acting user sees of the
 * emulated workspace, and the things they do (commands, buttons, modal submissions) sent to
 * the app through the emulator's driver, signed as Slack signs them. The live-event panel
 * proxies the sandbox's control API.
 */

export interface PlaygroundPageDeps {
  readonly emulator: SlackEmulator;
  /** Late-bound: the page is mounted before the app has finished starting. */
  readonly app: () => OnAirApp | undefined;
  /** Called after anything the page did that changes the workspace (persistence). */
  readonly onChange?: () => void;
  /** Shown on the page: whether the workspace survives a restart, and where it lives. */
  readonly persistence: { readonly file: string } | undefined;
}

export type MountedHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
) => boolean | Promise<boolean>;

const PAGE_DIR = new URL("./page/", import.meta.url);
/**
 * Plain ESM modules of the emulator package the page imports as they are: the view-state table
 * and Slack's escaping of typed text. The same files the driver runs, so the two cannot drift.
 */
const require = createRequire(import.meta.url);
const SHARED: Readonly<Record<string, string>> = {
  "view-state.js": require.resolve("@onair/slack-emulator/view-state.js"),
  "slash-text.js": require.resolve("@onair/slack-emulator/slash-text.js"),
};
const STATIC = /^[a-z][a-z0-9-]*\.(js|css|svg)$/;
const TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  svg: "image/svg+xml",
  html: "text/html; charset=utf-8",
};
export function createPlaygroundPage(deps: PlaygroundPageDeps): MountedHandler {
  const { emulator } = deps;
  const ws = emulator.workspace;
  const changed = () => deps.onChange?.();

  const app = (): OnAirApp => {
    const a = deps.app();
    if (!a) throw new BadRequest("the app is still starting; try again in a second", 503);
    return a;
  };

  const user = (u: string) => {
    const found = ws.user(u);
    if (!found || found.is_bot) throw new BadRequest(`no person ${u} in the workspace`, 404);
    return found;
  };

  async function control(path: string, method: string, body?: unknown) {
    const res = await fetch(`${app().origin}/_sandbox/control/${path}`, {
      method,
      headers: { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    let json: unknown = text;
    try {
      json = JSON.parse(text);
    } catch {
      // keep the text: it says what went wrong
    }
    if (!res.ok) {
      const reason =
        typeof json === "object" && json !== null && "error" in json
          ? String((json as { error: unknown }).error)
          : `the sandbox answered HTTP ${res.status}`;
      throw new BadRequest(reason, res.status >= 500 ? 502 : res.status);
    }
    return json as Json;
  }

  async function api(req: IncomingMessage, res: ServerResponse, route: string, url: URL) {
    const method = req.method ?? "GET";
    const post = async <T extends z.ZodType>(schema: T) => {
      if (method !== "POST") throw new BadRequest("use POST", 405);
      return parse(schema, await readJson(req));
    };

    switch (route) {
      case "state": {
        const who = user(url.searchParams.get("user") ?? "").id;
        const body = {
          ...stateFor(ws, who),
          events: await listEvents(teamOf(ws, who)),
          workObjects: workObjectsOn(ws),
          flexpane: flexpaneOf(ws, who),
        };
        const text = JSON.stringify(body);
        const etag = `"${createHash("sha1").update(text).digest("base64url")}"`;
        if (req.headers["if-none-match"] === etag) {
          res.writeHead(304, { etag }).end();
          return;
        }
        res.writeHead(200, {
          "content-type": "application/json; charset=utf-8",
          "cache-control": "no-store",
          etag,
        });
        res.end(text);
        return;
      }
      case "file": {
        // An uploaded file's bytes (the report's chart shows inline, the CSV downloads).
        const f = fileState(ws).files.get(url.searchParams.get("id") ?? "");
        if (!f?.bytes) throw new BadRequest("no such file", 404);
        res.writeHead(200, {
          "content-type": String(fileJson(ws, f).mimetype),
          "content-disposition": `${f.name.endsWith(".png") ? "inline" : "attachment"}; filename="${f.name.replace(/[^\w.-]/g, "_")}"`,
          "cache-control": "no-store",
        });
        res.end(f.bytes);
        return;
      }
      case "meta": {
        sendJson(res, 200, {
          relayErrors: RELAY_ERROR_NAMES,
          // What the composer offers: each subcommand with its arguments and what it does.
          commands: SUBCOMMANDS.map((sub) => ({
            command: `${COMMAND} ${sub}`,
            args: HELP[sub].args ?? "",
            what: HELP[sub].what,
          })),
          persistence: deps.persistence
            ? { file: deps.persistence.file, dir: dirname(deps.persistence.file) }
            : null,
          sandboxed: app().sandbox !== undefined,
          // The Workflow Builder steps, as the manifest declares them (the page's step form).
          steps: STEP_DEFINITIONS,
          // What the composer's shortcut menu (the lightning bolt) offers.
          shortcuts: Object.values(SHORTCUTS).map((x) => ({
            callback_id: x.callbackId,
            name: x.name,
            what: x.description,
          })),
        });
        return;
      }
      case "command": {
        const b = await post(CommandBody);
        user(b.user);
        const m = /^\s*(\/[a-z0-9_-]+)\s*(.*)$/is.exec(b.text);
        if (!m?.[1]) throw new BadRequest("a command starts with a slash, as /onair help");
        const r = await emulator.driver.slashCommand({
          user: b.user,
          channel: b.channel,
          command: m[1].toLowerCase(),
          text: (m[2] ?? "").trim(),
        });
        changed();
        sendJson(res, 200, { status: r.status });
        return;
      }
      case "message": {
        const b = await post(MessageBody);
        user(b.user);
        const ch = ws.visibleChannel(b.channel, b.user);
        if (!ch.members.has(b.user)) throw new BadRequest("join the channel to post in it", 403);
        if (b.thread_ts === undefined) {
          // As Slack does: a join link of the events service is sent to the app (link_shared).
          const r = await emulator.driver.postMessage({
            user: b.user,
            channel: ch.id,
            text: b.text,
            unfurlDomains: [DEFAULT_JOIN_HOST],
          });
          changed();
          sendJson(res, 200, { ts: r.ts });
          return;
        }
        const msg = ws.postMessage(
          ch,
          b.user,
          { text: b.text, thread_ts: b.thread_ts },
          { via: "user" },
        );
        changed();
        sendJson(res, 200, { ts: msg.ts });
        return;
      }
      case "action": {
        const b = await post(ActionBody);
        user(b.user);
        if (b.view_id !== undefined && b.values) {
          const rec = ws.views.get(b.view_id);
          if (!rec || rec.closed || rec.user !== b.user) {
            throw new BadRequest("that view is no longer open", 409);
          }
          rec.view.state.values = { ...rec.view.state.values, ...b.values };
        }
        const s = b.state as Json | undefined;
        const r = await emulator.driver.blockAction({
          user: b.user,
          action_id: b.action_id,
          ...(b.block_id !== undefined && { block_id: b.block_id }),
          ...(b.channel !== undefined && { channel: b.channel }),
          ...(b.message_ts !== undefined && { message_ts: b.message_ts }),
          ...(b.ephemeral !== undefined && { ephemeral: b.ephemeral }),
          ...(b.view_id !== undefined && { view_id: b.view_id }),
          // A full state entry passes through the driver as is; a button's value is a string.
          ...(s !== undefined &&
            (s.type === "button" ? { value: s.value } : { value: s as unknown as string })),
        });
        changed();
        sendJson(res, 200, { status: r.status });
        return;
      }
      case "submit": {
        const b = await post(SubmitBody);
        user(b.user);
        const rec = ws.views.get(b.view_id);
        if (!rec || rec.closed || rec.user !== b.user) {
          throw new BadRequest("that view is no longer open", 409);
        }
        rec.view.state.values = { ...rec.view.state.values, ...b.values };
        const r = await emulator.driver.viewSubmission({ user: b.user, view_id: b.view_id });
        changed();
        sendJson(res, 200, { status: r.status, outcome: r.outcome });
        return;
      }
      case "close": {
        const b = await post(CloseBody);
        user(b.user);
        const r = await emulator.driver.viewClosed({ user: b.user, view_id: b.view_id });
        changed();
        sendJson(res, 200, { notified: r !== null });
        return;
      }
      case "home": {
        const b = await post(HomeBody);
        user(b.user);
        const r = await emulator.driver.event({ type: "app_home_opened", user: b.user });
        changed();
        sendJson(res, 200, { status: r.status });
        return;
      }
      case "workspace": {
        // An org's member of several workspaces switches the one they act in.
        const b = await post(WorkspaceBody);
        user(b.user);
        if (!moveTo(ws, b.user, b.team)) {
          throw new BadRequest(`${b.user} is not a member of workspace ${b.team}`, 409);
        }
        sendJson(res, 200, { team: b.team });
        return;
      }
      case "calls": {
        // What the app asked of Slack, for someone changing a modal or a card: method and
        // outcome only. Arguments and answers stay out (an ephemeral may carry a token meant
        // for one person, and anyone at this page can act as anyone).
        const since = Number(url.searchParams.get("since") ?? 0);
        const calls = emulator.calls
          .filter((c) => c.seq > (Number.isFinite(since) ? since : 0))
          .slice(-100)
          .map((c) => {
            const meta = (c.response as Json | undefined)?.response_metadata as Json | undefined;
            const messages = Array.isArray(meta?.messages) ? meta.messages.map(String) : undefined;
            return {
              seq: c.seq,
              method: c.method,
              ok: c.ok,
              status: c.status,
              time: c.time,
              ...(c.error !== undefined && { error: c.error }),
              ...(typeof c.args.channel === "string" && { channel: c.args.channel }),
              ...(!c.ok && messages && { messages: messages.slice(0, 10) }),
            };
          });
        sendJson(res, 200, { calls });
        return;
      }
      case "events": {
        // The acting person's workspace's events (an org has two); the default one's without.
        const who = url.searchParams.get("user");
        sendJson(res, 200, {
          events: await listEvents(who ? teamOf(ws, user(who).id) : ws.team.id),
        });
        return;
      }
      case "control/state": {
        const b = await post(StateControl);
        const out = await control(`events/${encodeURIComponent(b.eventId)}/state`, "POST", {
          state: b.state,
          ...(b.newInstance && { instanceId: `pg-${Date.now().toString(36)}` }),
        });
        sendJson(res, 200, out);
        return;
      }
      case "control/attendees": {
        const b = await post(AttendeesControl);
        const path = `events/${encodeURIComponent(b.eventId)}/attendees`;
        // Who is in comes from the sandbox, which keeps it across restarts: "N leave" picks the
        // N who joined last, whatever this page remembers.
        const here = b.leave ? presentGuids(await control(path, "GET")) : [];
        const leave = b.leave ? here.slice(Math.max(0, here.length - b.leave)) : [];
        const team = b.team ?? ws.team.id;
        if (!workspacesOf(ws).some((w) => w.id === team)) {
          throw new BadRequest(`no workspace ${team} here`, 404);
        }
        const staff = b.role ? await staffOf(team, b.eventId, b.role) : [];
        if (b.role && staff.length === 0) {
          throw new BadRequest(`this event has no ${b.role}s: add some with Edit first`, 409);
        }
        const join = [...(b.join ?? []).map((name) => ({ name })), ...staff];
        const out = await control(path, "POST", {
          ...(join.length > 0 && { join }),
          ...(b.count && { count: b.count }),
          ...(leave.length > 0 && { leave }),
        });
        const joined = Array.isArray(out.joined) ? (out.joined as Json[]) : [];
        // The burst's attendee list is long and the page needs only the counts.
        sendJson(res, 200, {
          joined: joined.length,
          alreadyPresent: Array.isArray(out.alreadyPresent) ? out.alreadyPresent.length : 0,
          left: leave.length,
          delivered: out.delivered,
          failed: out.failed,
          activeAttendeeCount: out.activeAttendeeCount,
        });
        return;
      }
      case "shortcut": {
        // A global shortcut, as Slack's shortcut menu (the lightning bolt) sends it.
        const b = await post(ShortcutBody);
        user(b.user);
        const r = await emulator.driver.shortcut({ user: b.user, callback_id: b.callback_id });
        changed();
        sendJson(res, 200, { status: r.status });
        return;
      }
      case "work-objects": {
        // The app's Work Object Previews setting, as an admin turns it on at api.slack.com.
        const b = await post(WorkObjectsBody);
        switchWorkObjects(ws, b.enabled);
        sendJson(res, 200, { enabled: b.enabled });
        return;
      }
      case "work-object/open": {
        const b = await post(OpenWorkObjectBody);
        user(b.user);
        const flexpane = await openFlexpane(emulator, b);
        changed();
        sendJson(res, 200, { flexpane });
        return;
      }
      case "work-object/action": {
        const b = await post(FlexpaneActionBody);
        user(b.user);
        const status = await pressFlexpane(emulator, b);
        changed();
        sendJson(res, 200, { status });
        return;
      }
      case "step": {
        const r = await runPlaygroundStep(emulator, await post(StepBody));
        changed();
        sendJson(res, r.status, r.body);
        return;
      }
      case "control/faults": {
        if (method === "DELETE") {
          sendJson(res, 200, await control("faults", "DELETE"));
          return;
        }
        const b = await post(FaultControl);
        sendJson(res, 200, await control("faults", "POST", b));
        return;
      }
      default:
        throw new BadRequest(`no API route ${route}`, 404);
    }
  }

  /** The event's panelists or moderators as joins: their e-mails, named as the workspace has them. */
  async function staffOf(
    team: string,
    eventId: string,
    role: "panelist" | "moderator",
  ): Promise<Array<{ name: string; email: string }>> {
    const a = app();
    const record = await a.store.events.get(team, eventId);
    const sub = record ? await subscriptionOf(a.deps, record) : undefined;
    const event = sub ? eventOf(sub.sub) : undefined;
    const emails = emailsOf(
      role === "panelist" ? (event?.panelists ?? []) : (event?.moderators ?? []),
    );
    return emails.map((email) => {
      const person = [...ws.users.values()].find(
        (u) => u.email?.toLowerCase() === email.toLowerCase(),
      );
      return { name: person?.real_name || email.split("@")[0] || email, email };
    });
  }

  /** Per event: the engine's figures as of its live record's last write (the page polls). */
  const figuresSeen = new Map<
    string,
    { updatedAt: number; figures: AttendanceFigures | undefined }
  >();

  /**
   * The live engine's figures, read again only when its record was rewritten since (an end the
   * quiet rule decides is written too), so the page's polling costs one key read per event.
   */
  async function figuresOf(
    a: OnAirApp,
    team: string,
    eventId: string,
  ): Promise<AttendanceFigures | undefined> {
    const key = `${team}:${eventId}`;
    const record = await a.store.repository(liveRepo).get(key);
    if (!record) return undefined;
    const seen = figuresSeen.get(key);
    if (seen?.updatedAt === record.updatedAt) return seen.figures;
    const figures = await a.deps.live.figures(team, eventId);
    figuresSeen.set(key, { updatedAt: record.updatedAt, figures });
    return figures;
  }

  async function listEvents(team: string): Promise<Json[]> {
    const a = deps.app();
    if (!a) return [];
    const records = await a.store.events.list(team);
    records.sort((x, y) => y.createdAt - x.createdAt);
    // The live engine's figures and its word on whether the instance ended, as the card shows
    // them; the record's mirror when the engine has none.
    const lives = await Promise.all(records.map((r) => figuresOf(a, team, r.eventId)));
    return records.map((r, n) => {
      const f = lives[n];
      const inst: InstanceView | undefined = f
        ? {
            instanceId: f.instanceId,
            state: f.endedAt !== undefined ? "ENDED" : (f.state ?? "NOT_STARTED"),
            present: f.present,
            peak: f.peak,
            unique: f.unique,
            ...(f.endedAt !== undefined ? { endedAt: f.endedAt } : {}),
          }
        : latestInstance(r.instances);
      return {
        eventId: r.eventId,
        title: r.title ?? r.eventId,
        organizer: r.organizer,
        cancelled: r.cancelled === true,
        gone: r.gone === true,
        channels: Object.keys(r.cards),
        state: inst?.state ?? "NOT_STARTED",
        instanceId: inst?.instanceId ?? null,
        present: inst?.present ?? 0,
        peak: inst?.peak ?? 0,
        unique: inst?.unique ?? 0,
        endedAt: inst?.endedAt ?? null,
      };
    });
  }

  async function staticFile(res: ServerResponse, name: string) {
    const ext = name.slice(name.lastIndexOf(".") + 1);
    let body: Buffer;
    try {
      const shared = Object.hasOwn(SHARED, name) ? SHARED[name] : undefined;
      body = await readFile(shared ?? new URL(name, PAGE_DIR));
    } catch {
      sendJson(res, 404, { error: "not found" });
      return;
    }
    res.writeHead(200, {
      "content-type": TYPES[ext] ?? "application/octet-stream",
      "content-length": body.length,
      "cache-control": "no-cache",
      "x-content-type-options": "nosniff",
    });
    res.end(body);
  }

  return async (req, res, url) => {
    const path = url.pathname;
    if (path !== "/playground" && !path.startsWith("/playground/")) return false;
    try {
      if (path === "/playground" || path === "/playground/") {
        if (req.method !== "GET" && req.method !== "HEAD") throw new BadRequest("use GET", 405);
        await staticFile(res, "index.html");
        return true;
      }
      if (path.startsWith("/playground/static/")) {
        const name = path.slice("/playground/static/".length);
        if (!STATIC.test(name)) throw new BadRequest("no such file", 404);
        await staticFile(res, name);
        return true;
      }
      if (path.startsWith("/playground/api/")) {
        await api(req, res, path.slice("/playground/api/".length), url);
        return true;
      }
      throw new BadRequest("not found", 404);
    } catch (err) {
      if (err instanceof BadRequest) {
        sendJson(res, err.status, { error: err.message });
      } else if (err instanceof DriverError || err instanceof SlackApiError) {
        sendJson(res, 400, { error: err.message });
      } else {
        throw err;
      }
      return true;
    }
  };
}
