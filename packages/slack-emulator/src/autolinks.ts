/**
 * What Slack turns into links on its own in what a message shows. Slack's formatting reference:
 * in mrkdwn, "URLs will be auto-converted into links" unless a text object sets `verbatim: true`
 * (api.slack.com/reference/block-kit/composition-objects#text: "When set to false (as is
 * default) URLs will be auto-converted into links"). A message with blocks shows its blocks (its
 * `text` is then only the notification's fallback); one without shows its `text`. Links the app
 * wrote itself (`<https://…|label>`) are what it meant and are not counted. Bare domains are
 * recognised for a few common top-level domains only, and plain_text is not read (whether Slack's
 * clients link URLs there is not documented): Slack links at least these.
 */

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

const EXPLICIT = /<[^<>]*>/g;
const BARE =
  /\b(?:[a-z][a-z0-9+.-]*:\/\/[^\s<>|]+|[a-z0-9._%+-]+@(?:[a-z0-9-]+\.)+[a-z]{2,}\b|www\.[^\s<>|]+|(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|co|info|biz|me|xyz|gov|edu|example)\b(?:\/[^\s<>|]*)?)/gi;

/** The URLs in one mrkdwn string that Slack would link though the app did not. */
export function autolinksInText(text: string): string[] {
  return [...text.replace(EXPLICIT, " ").matchAll(BARE)].map((m) => m[0]);
}

function shownTexts(v: unknown, into: string[]): void {
  if (Array.isArray(v)) {
    for (const x of v) shownTexts(x, into);
    return;
  }
  if (!isObj(v)) return;
  if (v.type === "mrkdwn" && typeof v.text === "string") {
    if (v.verbatim !== true) into.push(v.text);
    return;
  }
  for (const x of Object.values(v)) shownTexts(x, into);
}

/** Stored messages whose text Slack linked on storing: the URLs it wrapped (autolinkedUrls). */
const linkedOnStore = new WeakMap<object, readonly string[]>();

/** Punctuation that ends a sentence, or mrkdwn that closes around a URL, rather than belonging to it. */
const TRAILING = /[.,;:!?'")\]*_~]+$/;

/**
 * A message's top-level `text` as Slack stores it: "we will still linkify any non-linked URLs
 * present in your message. IN: Foo bar http://test.com OUT: Foo bar <http://test.com>" (Slack's
 * message formatting reference, default parse mode). What conversations.history,
 * chat.scheduledMessages.list and events then carry is the rewritten text, so an app that finds
 * its own message again by comparing text must allow for it. Links the app wrote are kept as
 * they are; a bare domain becomes `<http://domain|domain>` and an e-mail address
 * `<mailto:address|address>`, as Slack's clients show them.
 */
export function linkedAsStored(text: string): { text: string; linked: string[] } {
  const linked: string[] = [];
  let out = "";
  let last = 0;
  const linkGap = (gap: string) =>
    gap.replace(BARE, (m) => {
      const url = m.replace(TRAILING, "");
      const tail = m.slice(url.length);
      if (url.length === 0) return m;
      linked.push(url);
      if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) return `<${url}>${tail}`;
      if (url.includes("@")) return `<mailto:${url}|${url}>${tail}`;
      return `<http://${url}|${url}>${tail}`;
    });
  for (const m of text.matchAll(EXPLICIT)) {
    out += linkGap(text.slice(last, m.index)) + m[0];
    last = m.index + m[0].length;
  }
  out += linkGap(text.slice(last));
  return { text: out, linked };
}

/** Records which URLs Slack linked when it stored `message` (see linkedAsStored). */
export function rememberLinked(message: object, linked: readonly string[]): void {
  if (linked.length > 0) linkedOnStore.set(message, linked);
  else linkedOnStore.delete(message);
}

/** The URLs Slack linked when it stored `message`, if any. */
export function linkedOf(message: object): readonly string[] {
  return linkedOnStore.get(message) ?? [];
}

/** The URLs a message shows as links that the app did not write as links. */
export function autolinkedUrls(message: { text?: unknown; blocks?: unknown }): string[] {
  const texts: string[] = [];
  if (Array.isArray(message.blocks) && message.blocks.length > 0) shownTexts(message.blocks, texts);
  else {
    const stored = linkedOnStore.get(message);
    if (stored) return [...stored];
    if (typeof message.text === "string") texts.push(message.text);
  }
  return texts.flatMap(autolinksInText);
}
