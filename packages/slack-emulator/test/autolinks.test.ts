import { describe, expect, it } from "vitest";
import { autolinkedUrls, autolinksInText } from "../src/index.ts";

describe("what Slack links on its own", () => {
  it("finds bare URLs, www. and common domains, not the links the app wrote", () => {
    expect(
      autolinksInText(
        "see https://evil.example/x.gif, www.evil.test and evil.com/path; <https://ok.example|ok>",
      ),
    ).toEqual(["https://evil.example/x.gif,", "www.evil.test", "evil.com/path;"]);
    expect(autolinksInText("Dr. J. Smith &lt;https://a.example&gt;")).toEqual([
      "https://a.example&gt;",
    ]);
    expect(autolinksInText("Ann Alpha joined. Now 3 attending.")).toEqual([]);
  });

  it("reads the blocks when there are some (text is then only the fallback), but not verbatim text", () => {
    const text = "Bob https://evil.example joined";
    expect(autolinkedUrls({ text })).toEqual(["https://evil.example"]);
    const section = (verbatim: boolean) => ({
      type: "section",
      text: { type: "mrkdwn", text, verbatim },
    });
    expect(autolinkedUrls({ text, blocks: [section(false)] })).toEqual(["https://evil.example"]);
    expect(autolinkedUrls({ text, blocks: [section(true)] })).toEqual([]);
  });
});
