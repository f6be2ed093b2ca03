import type { Directory } from "./directory.ts";
import type { Channel, Json, Message, User, ViewRecord } from "./model.ts";

/** The JSON shapes Slack returns for people, conversations, messages and views. */

function tzInfo(tz: string, atMs: number): { offsetSec: number; label: string } {
  const offsetPart = new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "longOffset" })
    .formatToParts(atMs)
    .find((p) => p.type === "timeZoneName")?.value;
  const m = /GMT([+-])(\d{2}):(\d{2})/.exec(offsetPart ?? "");
  const offsetSec = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 3600 + Number(m[3]) * 60) : 0;
  const label =
    new Intl.DateTimeFormat("en-US", { timeZone: tz, timeZoneName: "long" })
      .formatToParts(atMs)
      .find((p) => p.type === "timeZoneName")?.value ?? tz;
  return { offsetSec, label };
}

export function userJson(ws: Directory, u: User, withEmail: boolean): Json {
  const { offsetSec, label } = tzInfo(u.tz, ws.now());
  const profile: Json = {
    title: u.title,
    phone: "",
    skype: "",
    real_name: u.real_name,
    real_name_normalized: u.real_name,
    display_name: u.name,
    display_name_normalized: u.name,
    status_text: "",
    status_emoji: "",
    avatar_hash: "g0000000000",
    image_24: `https://a.slack-edge.example/${u.id}_24.png`,
    image_48: `https://a.slack-edge.example/${u.id}_48.png`,
    image_72: `https://a.slack-edge.example/${u.id}_72.png`,
    team: u.team_id,
  };
  if (withEmail && u.email !== undefined) profile.email = u.email;
  if (u.bot_id !== undefined) {
    profile.bot_id = u.bot_id;
    profile.api_app_id = u.app_id ?? ws.app.appId;
  }
  const org = ws.enterprise;
  const inOrg = org && [ws.team.id, ...org.teams.map((t) => t.id)].includes(u.team_id);
  return {
    id: u.id,
    team_id: u.team_id,
    // A member of an Enterprise organization (Slack gives this only to an org's members).
    ...(inOrg && {
      enterprise_user: {
        id: u.id,
        enterprise_id: org.id,
        enterprise_name: org.name,
        is_admin: u.is_admin,
        is_owner: u.is_owner,
        teams: [u.team_id],
      },
    }),
    name: u.name,
    deleted: u.deleted,
    color: "9f69e7",
    real_name: u.real_name,
    tz: u.tz,
    tz_label: label,
    tz_offset: offsetSec,
    profile,
    is_admin: u.is_admin,
    is_owner: u.is_owner,
    is_primary_owner: u.is_primary_owner,
    is_restricted: u.is_restricted,
    is_ultra_restricted: u.is_ultra_restricted,
    is_bot: u.is_bot,
    is_app_user: false,
    updated: ws.nowSec(),
    is_email_confirmed: !u.is_bot,
  };
}

export function channelJson(ws: Directory, ch: Channel, viewer: string, withCount = false): Json {
  if (ch.is_im) {
    return {
      id: ch.id,
      created: ch.created,
      is_im: true,
      is_org_shared: false,
      user: ch.user,
      is_user_deleted: false,
      priority: 0,
    };
  }
  const out: Json = {
    id: ch.id,
    name: ch.name,
    is_channel: !ch.is_private,
    is_group: ch.is_private,
    is_im: false,
    is_mpim: false,
    is_private: ch.is_private,
    created: ch.created,
    is_archived: ch.is_archived,
    is_general: ch.is_general,
    unlinked: 0,
    name_normalized: ch.name,
    is_shared: false,
    is_org_shared: false,
    is_ext_shared: false,
    is_pending_ext_shared: false,
    pending_shared: [],
    context_team_id: ws.team.id,
    shared_team_ids: [ws.team.id],
    parent_conversation: null,
    creator: ch.creator,
    is_member: ch.members.has(viewer),
    topic: { value: ch.topic, creator: ch.creator, last_set: ch.created },
    purpose: { value: ch.purpose, creator: ch.creator, last_set: ch.created },
    previous_names: [],
  };
  if (withCount) out.num_members = ch.members.size;
  return out;
}

export function messageJson(ws: Directory, m: Message): Json {
  const out: Json = structuredClone(m) as unknown as Json;
  // The emulator's own mark; Slack's message object has no such field.
  delete out.thread_locked;
  if (m.bot_id !== undefined) {
    const other = m.bot_id === ws.app.botId ? undefined : ws.user(m.user);
    out.bot_profile = {
      id: m.bot_id,
      app_id: m.app_id ?? ws.app.appId,
      name: other?.real_name ?? ws.app.name,
      deleted: false,
      team_id: ws.team.id,
    };
  }
  return out;
}

export function viewJson(rec: ViewRecord): Json {
  return structuredClone(rec.view) as unknown as Json;
}
