/**
 * Slash command text as Slack sends it with `should_escape: true` (our manifest sets it): a
 * channel picked from the composer's suggestions arrives as `<#C123|events>`, a user as
 * `<@U123|omar>`, a link as `<https://…>`, and `&`, `<`, `>` typed by the user as `&amp;`,
 * `&lt;`, `&gt;`. These helpers read it back.
 */

/** Slack's three entities back to the characters the user typed. */
export function unescapeEntities(text: string): string {
  return text.replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&");
}

/** Words, keeping each `<…>` reference whole (a user's display name may hold spaces). */
export function words(text: string): string[] {
  return text.match(/<[^>]*>|[^\s<]+/g) ?? [];
}

const CHANNEL = /^<#([CGD][A-Z0-9]{2,})(?:\|[^>]*)?>$/;
const BARE_CHANNEL = /^([CG][A-Z0-9]{6,})$/;

/** A channel reference (`<#C123|name>`, `<#C123>`) or a bare channel id, as its id. */
export function channelOf(word: string): string | undefined {
  return CHANNEL.exec(word)?.[1] ?? BARE_CHANNEL.exec(word)?.[1];
}

/** The text after the subcommand, as the user typed it (references kept in Slack's form). */
export function splitCommand(text: string): { first: string; rest: string } {
  const trimmed = text.trim();
  const m = /^(\S+)\s*([\s\S]*)$/.exec(trimmed);
  return m
    ? { first: (m[1] ?? "").toLowerCase(), rest: (m[2] ?? "").trim() }
    : { first: "", rest: "" };
}
