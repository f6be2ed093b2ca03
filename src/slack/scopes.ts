/**
 * The Web API methods the app calls and the bot scope each one needs (a list: one per kind of
 * conversation the app uses it on). The manifest's scopes are exactly the union of these, so
 * adding a call here is how a scope gets requested; test/unit/manifest/scopes.test.ts holds
 * this table equal to the Web API methods the code calls, both ways.
 */
export const METHOD_SCOPES = {
  "auth.test": null,
  "chat.postMessage": "chat:write",
  "chat.update": "chat:write",
  "chat.postEphemeral": "chat:write",
  "chat.scheduleMessage": "chat:write",
  "chat.deleteScheduledMessage": "chat:write",
  // A reminder whose scheduling answer was lost: is it already held? (src/live/reminders.ts)
  "chat.scheduledMessages.list": null,
  "views.open": null,
  "views.update": null,
  "views.publish": null,
  "users.info": "users:read",
  "users.lookupByEmail": "users:read.email",
  "usergroups.list": "usergroups:read",
  "usergroups.users.list": "usergroups:read",
  // Who may send an event's live card to a channel: a member of it (src/slack/directory.ts).
  "conversations.members": ["channels:read", "groups:read"],
  // Can the app post where the live card would go (a private channel it was not invited to)?
  "conversations.info": ["channels:read", "groups:read"],
  // On notify, into a public channel it is not in yet: members' posts can be read back after a
  // crash (conversations.history / replies below), which chat:write.public alone does not allow.
  "conversations.join": "channels:join",
  // Only after a crash: is the card or digest whose answer was lost already there (live/recover.ts)?
  // Notified channels may be public or private.
  "conversations.history": ["channels:history", "groups:history"],
  "conversations.replies": ["channels:history", "groups:history"],
  // The attendance report's chart and CSV, into the card's thread (src/live/report-upload.ts).
  "files.getUploadURLExternal": "files:write",
  "files.completeUploadExternal": "files:write",
  // Live unfurls of the events service's join links (src/slack/events/link-shared.ts).
  "chat.unfurl": "links:write",
  // A join link's Work Object flexpane (src/slack/events/entity-details.ts): no scope.
  "entity.presentDetails": null,
  // Token rotation (src/slack/installation-store.ts): refresh, and moving a long-lived token over.
  "oauth.v2.access": null,
  "oauth.v2.exchange": null,
  // Who to tell when Slack refuses to refresh the token: the workspace's admins (src/slack/home.ts).
  "users.list": "users:read",
  // The live event as a Slack call (src/live/posts/call.ts); a workspace that has not granted
  // these yet goes on without the call until an admin reinstalls (the settings Check says so).
  "calls.add": "calls:write",
  "calls.update": "calls:write",
  "calls.end": "calls:write",
  "calls.participants.add": "calls:write",
  "calls.participants.remove": "calls:write",
  // After a crash: who Slack has in an adopted call.
  "calls.info": "calls:read",
} as const satisfies Record<string, string | readonly string[] | null>;

export type SlackMethod = keyof typeof METHOD_SCOPES;

/**
 * Scopes needed beyond any single method: `commands` for the slash command and shortcut;
 * `chat:write.public` so a public notify channel works even where the bot could not join it; `users:read.email`
 * because users.info only returns e-mail addresses with it (linking relies on that); `links:read`
 * for the link_shared event.
 */
export const EXTRA_SCOPES = [
  "commands",
  "chat:write.public",
  "users:read.email",
  // The link_shared event (live unfurls) is sent only to apps holding links:read.
  "links:read",
] as const;

export function botScopes(): string[] {
  const all = new Set<string>(EXTRA_SCOPES);
  for (const scope of Object.values(METHOD_SCOPES)) {
    for (const s of typeof scope === "string" ? [scope] : (scope ?? [])) all.add(s);
  }
  return [...all].sort();
}
