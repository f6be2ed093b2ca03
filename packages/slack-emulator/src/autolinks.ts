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
  /\b(?:[a-z][a-z0-9+.-]*:\/\/[^\s<>|]+|www\.[^\s<>|]+|(?:[a-z0-9-]+\.)+(?:com|org|net|io|dev|app|co|info|biz|me|xyz|gov|edu|example)\b(?:\/[^\s<>|]*)?)/gi;

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

/** The URLs a message shows as links that the app did not write as links. */
export function autolinkedUrls(message: { text?: unknown; blocks?: unknown }): string[] {
  const texts: string[] = [];
  if (Array.isArray(message.blocks) && message.blocks.length > 0) shownTexts(message.blocks, texts);
  else if (typeof message.text === "string") texts.push(message.text);
  return texts.flatMap(autolinksInText);
}
