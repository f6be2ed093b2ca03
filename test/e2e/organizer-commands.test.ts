import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EVENT_FIELDS as F, VIEWS } from "../../src/ids.ts";
import { CHANNELS, type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import {
  commandOpensModal,
  expectAllPayloadsValid,
  future,
  isMessageTo,
  scheduleViaForm,
  viewOf,
  waitFor,
} from "./organizer-helpers.ts";

/** What the organizer types after `/onair`: event names, noise words, a schedule's text. */

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

async function responseTo(user: string, text: string, channel: string = CHANNELS.general) {
  const since = h.emulator.calls.length;
  await h.driver.slashCommand({ user, channel, text });
  return waitFor(h, (c) => c.method === "response_url", since);
}

describe("<event> by words of its title", () => {
  it("`show town hall` finds “Quarterly town hall”; ambiguous words list the candidates", async () => {
    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Quarterly town hall", future(5));
    const show = await responseTo(USERS.kei, "show town hall");
    expect(JSON.stringify(show.args.blocks)).toContain("Quarterly town hall");
    expect(JSON.stringify(show.args.blocks)).toContain("moderator link");

    await scheduleViaForm(h, USERS.kei, CHANNELS.general, "Town hall rehearsal", future(4));
    const both = await responseTo(USERS.kei, "show hall");
    const text = String(both.args.text);
    expect(text).toMatch(/More than one of your events matches/);
    expect(text).toContain("Quarterly town hall");
    expect(text).toContain("Town hall rehearsal");
    // The start of a title still wins over words inside another.
    const start = await responseTo(USERS.kei, "show town hall r");
    expect(JSON.stringify(start.args.blocks)).toContain("Town hall rehearsal");
    // Every command taking <event> reads it so: edit opens the form for it.
    const since = h.emulator.calls.length;
    await h.driver.slashCommand({
      user: USERS.kei,
      channel: CHANNELS.general,
      text: "edit quarterly hall",
    });
    const form = await waitFor(
      h,
      (c) => c.method === "views.update" && viewOf(c).callback_id === VIEWS.event,
      since,
    );
    expect(JSON.stringify(viewOf(form).blocks)).toContain("Quarterly town hall");
    await h.driver.viewClosed({ user: USERS.kei });
    const none = await responseTo(USERS.kei, "show own hall");
    expect(String(none.args.text)).toMatch(/None of your events/);
  });
});

describe("/onair notify's noise word", () => {
  it("an unknown one is named, with the valid ones, and nothing is subscribed", async () => {
    const id = await scheduleViaForm(h, USERS.omar, CHANNELS.general, "Noisy webinar", future(6));
    const after = await responseTo(USERS.omar, `notify ${id} #general loud`);
    expect(String(after.args.text)).toMatch(/“loud” isn't a noise level/);
    for (const w of ["off", "counter", "digest", "every"]) {
      expect(String(after.args.text)).toContain(`\`${w}\``);
    }
    const before = await responseTo(USERS.omar, `notify noisy webinar loud #general`);
    expect(String(before.args.text)).toMatch(/“loud” isn't a noise level/);
    expect(await h.app.store.subscriptions.forEvent(TEAM, id)).toEqual([]);

    const ok = await responseTo(USERS.omar, `notify ${id} #general counter`);
    expect(String(ok.args.text)).toMatch(/Live notices for \*Noisy webinar\* now go to/);
    expect(String(ok.args.text)).toContain("a running count");
  });

  it("help lists the noise words", async () => {
    const help = await responseTo(USERS.member, "help");
    expect(String(help.args.text)).toMatch(
      /\/onair notify <event> \[#channel\] \[off\|counter\|digest\|every\]/,
    );
    expect(String(help.args.text)).toMatch(/off, counter .*digest .*every/);
  });
});

describe("/onair schedule with text", () => {
  it("`tomorrow 3pm Demo` fills in the title and the start, and says so", async () => {
    const call = await commandOpensModal(
      h,
      USERS.omar,
      CHANNELS.general,
      "schedule tomorrow 3pm Demo",
      VIEWS.event,
    );
    const blocks = viewOf(call).blocks as Array<{
      block_id?: string;
      type: string;
      element?: Record<string, unknown>;
      elements?: Array<{ text: string }>;
    }>;
    const el = (id: string) => blocks.find((b) => b.block_id === id)?.element ?? {};
    expect(el(F.title).initial_value).toBe("Demo");
    // Omar's Slack zone is Europe/Berlin: 15:00 there, tomorrow.
    const start = Number(el(F.start).initial_date_time) * 1000;
    const parts = new Intl.DateTimeFormat("en-GB", {
      timeZone: "Europe/Berlin",
      hour: "2-digit",
      minute: "2-digit",
      hourCycle: "h23",
    }).format(new Date(start));
    expect(parts).toBe("15:00");
    const dayOf = (ms: number) =>
      new Intl.DateTimeFormat("en-CA", { timeZone: "Europe/Berlin" }).format(new Date(ms));
    expect(dayOf(start)).toBe(dayOf(Date.now() + 86_400_000));
    expect(Number(el(F.end).initial_date_time) * 1000 - start).toBe(3_600_000);
    const note = blocks.find((b) => b.type === "context")?.elements?.[0]?.text ?? "";
    expect(note).toContain("“tomorrow 3pm Demo”");
    expect(note).toContain("the title “Demo”");
    await h.driver.viewClosed({ user: USERS.omar });
  });

  it("text without a day or time becomes the title, escaped in the note", async () => {
    const call = await commandOpensModal(
      h,
      USERS.omar,
      CHANNELS.general,
      "schedule <!channel> party",
      VIEWS.event,
    );
    const blocks = viewOf(call).blocks as Array<{
      block_id?: string;
      type: string;
      element?: Record<string, unknown>;
      elements?: Array<{ text: string }>;
    }>;
    expect(blocks.find((b) => b.block_id === F.title)?.element?.initial_value).toBe(
      "<!channel> party",
    );
    const note = blocks.find((b) => b.type === "context")?.elements?.[0]?.text ?? "";
    expect(note).toContain("&lt;!channel&gt; party");
    expect(note).not.toContain("<!channel>");
    await h.driver.viewClosed({ user: USERS.omar });
  });

  it("the confirmation quotes the description, escaped", async () => {
    const since = h.emulator.calls.length;
    await scheduleViaForm(h, USERS.omar, CHANNELS.general, "Described webinar", future(8), {
      [F.description]: "Agenda: <!channel> & <https://example.com|slides>\nQ&A after",
    });
    const done = await waitFor(h, isMessageTo(USERS.omar, /Scheduled/), since);
    const text = JSON.stringify(done.args.blocks);
    expect(text).toContain(
      "*Description:*\\nAgenda: &lt;!channel&gt; &amp; &lt;https://example.com|slides&gt;\\nQ&amp;A after",
    );
    expect(text).not.toContain("<!channel>");
  });

  it("every payload passed Block Kit limits", () => {
    expectAllPayloadsValid(h);
  });
});
