// The composer: a message or a slash command, Slack's hints while typing (#channels, @people,
// the app's subcommands), what a command sends, and the shortcuts behind the lightning bolt.
import { fill, h } from "./dom.js";
import { escapeSlashText, suggest } from "./slash-text.js";
import { api, S, toast } from "./state.js";

export function composer(ch, threadTs) {
  const ta = h("textarea", {
    class: "composer-input",
    rows: 1,
    "data-testid": threadTs ? "thread-composer" : "composer",
    placeholder: ch
      ? `${threadTs ? "Reply…" : `Message ${ch.is_im ? S.state.appName : `#${ch.name}`}`} — try /onair help`
      : "Try /onair help",
    onkeydown: (e) => {
      if (e.key === "Enter" && !e.shiftKey) {
        e.preventDefault();
        send();
      }
    },
  });
  const hints = h("div", { class: "hints", hidden: true, "data-testid": "composer-hints" });
  // What Slack will send the app for a command (should_escape): channels, people, links and
  // &, <, > rewritten, as the person sees before pressing Enter here.
  const preview = h("div", { class: "muted small sends", hidden: true, "data-testid": "sends" });
  const directory = () => ({
    users: S.state?.users ?? [],
    channels: (S.state?.channels ?? []).filter((c) => !c.is_im),
    usergroups: S.state?.usergroups ?? [],
  });
  const offer = (items, pick) => {
    hints.hidden = items.length === 0;
    fill(
      hints,
      items.map((item) =>
        h(
          "button",
          {
            type: "button",
            class: "hint",
            onclick: () => {
              pick(item);
              hints.hidden = true;
              ta.focus();
              ta.dispatchEvent(new Event("input"));
            },
          },
          item.label,
        ),
      ),
    );
  };
  ta.addEventListener("input", () => {
    const text = ta.value;
    const typed = text.trim();
    const command = /^\s*\/[a-z0-9_-]+\s+(.*)$/is.exec(text);
    preview.hidden = !command;
    if (command) fill(preview, `Slack sends: ${escapeSlashText(command[1].trim(), directory())}`);
    // A #channel or @person being typed: Slack's composer offers the matching ones.
    const s = suggest(text, ta.selectionStart, directory());
    if (s && s.items.length > 0) {
      offer(s.items.slice(0, 8), (item) => {
        ta.value = `${text.slice(0, s.start)}${item.insert}${text.slice(s.end)}`;
        const caret = s.start + item.insert.length;
        ta.setSelectionRange(caret, caret);
      });
      return;
    }
    // Offer subcommands while the first word after the command is being typed.
    const offering = typed.startsWith("/") && typed.split(/\s+/).length <= 2;
    const list = offering
      ? (S.meta?.commands ?? []).filter((c) => c.command.startsWith(typed) && c.command !== typed)
      : [];
    // As Slack's composer lists an app's commands: the usage, then what it does.
    offer(
      list.map((c) => ({
        label: h(
          "span",
          {},
          h("b", {}, c.command),
          c.args ? ` ${c.args}` : "",
          h("span", { class: "muted what" }, ` — ${c.what}`),
        ),
        insert: c.command,
      })),
      (item) => {
        ta.value = `${item.insert} `;
      },
    );
  });
  const send = async () => {
    hints.hidden = true;
    preview.hidden = true;
    const text = ta.value.trim();
    if (!text) return;
    const channel = ch?.id ?? (S.place === "dm" ? S.me : "C0GENERAL");
    ta.value = "";
    try {
      if (text.startsWith("/")) await api("command", { user: S.me, channel, text });
      else
        await api("message", {
          user: S.me,
          channel,
          text,
          ...(threadTs && { thread_ts: threadTs }),
        });
    } catch (e) {
      ta.value = text;
      toast(e.message);
    }
  };
  // Slack's lightning bolt: the app's global shortcuts, from any conversation (not a thread).
  const bolt = threadTs
    ? null
    : h(
        "button",
        {
          class: "bolt",
          type: "button",
          title: "Shortcuts",
          "data-testid": "shortcuts",
          onclick: () =>
            offer(
              (S.meta?.shortcuts ?? []).map((x) => ({ label: `⚡ ${x.name} — ${x.what}`, x })),
              async ({ x }) => {
                try {
                  await api("shortcut", { user: S.me, callback_id: x.callback_id });
                } catch (e) {
                  toast(e.message);
                }
              },
            ),
        },
        "⚡",
      );
  return h(
    "div",
    { class: "composer", "data-channel": ch?.id ?? "" },
    hints,
    preview,
    bolt,
    ta,
    h("button", { class: "send", title: "Send", onclick: send }, "➤"),
  );
}
