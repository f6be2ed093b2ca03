// What Slack makes of text a person types, shared by the driver (Node) and the playground
// composer (the browser loads this very file). Plain ESM JavaScript; types: slash-text.d.ts.
//
// escapeSlashText: a slash command's `text` as Slack sends it when the command has
// `should_escape: true` ("Escape channels, users, and links sent to your app"): `&`, `<`, `>`
// become `&amp;`, `&lt;`, `&gt;`; `#events` → `<#C…|events>`; `@omar` → `<@U…|omar>`;
// `@here` / `@channel` / `@everyone` → `<!here>` …; a user group `@organizers` →
// `<!subteam^S…|@organizers>`; URLs → `<https://…>`; e-mail addresses →
// `<mailto:a@b.c|a@b.c>`. Names nobody has stay as typed. Sources: api.slack.com/docs/formatting
// ("Hey <@U024BE7LH|bob>", "Why not join <#C024BE7LR|general>?", URL detection by the server)
// and the slash command page (api.slack.com/interactivity/slash-commands, "Escaping").
//
// linkNames: chat.postMessage's `link_names` (or parse=full): the same names linked in text that
// is already in Slack's format (no entity escaping).
//
// suggest: what Slack's composer offers while a `#channel` or `@name` is being typed.

const URL_RE = /https?:\/\/[^\s<>]+/y;
const EMAIL_RE = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+/y;
const CHANNEL_RE = /#([a-z0-9][a-z0-9_-]*)/y;
const MENTION_RE = /@([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9_-])?)/y;
const SPECIAL = new Set(["here", "channel", "everyone"]);

/** `&`, `<`, `>` as Slack's entities: what every typed text goes through first. */
export function escapeEntities(text) {
  return String(text).replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

function lookup(directory) {
  const users = new Map();
  for (const u of directory.users ?? []) {
    if (!u.deleted) users.set(String(u.name).toLowerCase(), u);
  }
  const channels = new Map();
  for (const c of directory.channels ?? []) {
    if (!c.is_im && !c.is_mpim) channels.set(String(c.name).toLowerCase(), c);
  }
  const groups = new Map();
  for (const g of directory.usergroups ?? []) groups.set(String(g.handle).toLowerCase(), g);
  return { users, channels, groups };
}

/** A character that may stand right before a #channel or @name (not part of a word). */
function boundary(text, i) {
  if (i === 0) return true;
  return !/[A-Za-z0-9_&#@/.]/.test(text[i - 1]);
}

function trimUrl(url) {
  const m = /[.,;:!?)\]]+$/.exec(url);
  return m ? url.slice(0, m.index) : url;
}

function link(text, directory, opts) {
  const { users, channels, groups } = lookup(directory);
  let out = "";
  let i = 0;
  while (i < text.length) {
    const ch = text[i];
    // Text already in Slack's link form stays whole (link_names on API text).
    if (!opts.escaped && ch === "<") {
      const end = text.indexOf(">", i);
      if (end > i) {
        out += text.slice(i, end + 1);
        i = end + 1;
        continue;
      }
    }
    if (ch === "h") {
      URL_RE.lastIndex = i;
      const m = URL_RE.exec(text);
      if (m && boundary(text, i)) {
        const url = trimUrl(m[0]);
        out += opts.urls ? `<${url}>` : url;
        i += url.length;
        continue;
      }
    }
    if (opts.urls && /[A-Za-z0-9._%+-]/.test(ch) && boundary(text, i)) {
      EMAIL_RE.lastIndex = i;
      const m = EMAIL_RE.exec(text);
      if (m) {
        out += `<mailto:${m[0]}|${m[0]}>`;
        i += m[0].length;
        continue;
      }
    }
    if (ch === "#" && boundary(text, i)) {
      CHANNEL_RE.lastIndex = i;
      const m = CHANNEL_RE.exec(text);
      const c = m ? channels.get(m[1].toLowerCase()) : undefined;
      if (m && c) {
        out += `<#${c.id}|${c.name}>`;
        i += m[0].length;
        continue;
      }
    }
    if (ch === "@" && boundary(text, i)) {
      MENTION_RE.lastIndex = i;
      const m = MENTION_RE.exec(text);
      if (m) {
        const name = m[1].toLowerCase();
        const u = users.get(name);
        const g = groups.get(name);
        const replacement = SPECIAL.has(name)
          ? `<!${name}>`
          : u
            ? `<@${u.id}|${u.name}>`
            : g
              ? `<!subteam^${g.id}|@${g.handle}>`
              : undefined;
        if (replacement !== undefined) {
          out += replacement;
          i += m[0].length;
          continue;
        }
      }
    }
    out += ch;
    i += 1;
  }
  return out;
}

/**
 * A slash command's text as Slack sends it with should_escape: true. `directory` holds what the
 * person typing can see: users ({id, name}), channels ({id, name}), usergroups ({id, handle}).
 */
export function escapeSlashText(typed, directory) {
  return link(escapeEntities(typed), directory, { escaped: true, urls: true });
}

/** chat.postMessage's link_names: bare @names and #channels in API text become links. */
export function linkNames(text, directory) {
  return link(String(text), directory, { escaped: false, urls: false });
}

/**
 * What the composer offers for the `#channel` or `@name` being typed just before `caret`:
 * `{ kind, start, end, items: [{ label, insert }] }`, or null when nothing is being typed.
 */
export function suggest(text, caret, directory) {
  const before = String(text).slice(0, caret ?? text.length);
  const m = /(^|[\s(])([#@])([A-Za-z0-9._-]*)$/.exec(before);
  if (!m) return null;
  const sigil = m[2];
  const query = m[3].toLowerCase();
  const start = before.length - m[3].length - 1;
  const starts = (s) =>
    String(s ?? "")
      .toLowerCase()
      .startsWith(query);
  let items;
  if (sigil === "#") {
    items = [...(directory.channels ?? [])]
      .filter((c) => !c.is_im && !c.is_mpim && starts(c.name))
      .map((c) => ({ label: `#${c.name}`, insert: `#${c.name} ` }));
  } else {
    const people = [...(directory.users ?? [])]
      .filter((u) => !u.deleted && !u.is_bot && (starts(u.name) || starts(u.real_name)))
      .map((u) => ({
        label: u.real_name ? `@${u.name} (${u.real_name})` : `@${u.name}`,
        insert: `@${u.name} `,
      }));
    const groups = [...(directory.usergroups ?? [])]
      .filter((g) => starts(g.handle))
      .map((g) => ({ label: `@${g.handle}`, insert: `@${g.handle} ` }));
    const special = [...SPECIAL]
      .filter((s) => starts(s))
      .map((s) => ({ label: `@${s}`, insert: `@${s} ` }));
    items = [...people, ...groups, ...special];
  }
  return { kind: sigil === "#" ? "channel" : "user", start, end: before.length, items };
}
