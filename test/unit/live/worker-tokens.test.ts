import { describe, expect, it } from "vitest";
import { WorkerTokens } from "../../../src/live/worker-tokens.ts";

/** The worker's tokens (src/live/worker-tokens.ts): one main-thread ask per workspace and moment. */

function asker(answers: Array<string | Error>) {
  const asked: string[] = [];
  const ask = async (team: string) => {
    asked.push(team);
    const next = answers.shift() ?? "xoxb-last";
    if (next instanceof Error) throw next;
    return next;
  };
  return { asked, ask };
}

describe("the worker's tokens", () => {
  it("asks the main thread once per workspace for many posts within the reuse time", async () => {
    let now = 0;
    const { asked, ask } = asker(["xoxb-1", "xoxb-2"]);
    const tokens = new WorkerTokens(ask, 1_000, () => now);
    const posts = await Promise.all(Array.from({ length: 50 }, () => tokens.token("T1")));
    expect(new Set(posts)).toEqual(new Set(["xoxb-1"]));
    now = 999;
    expect(await tokens.token("T1")).toBe("xoxb-1");
    expect(asked).toEqual(["T1"]);
    // A refreshed token (rotation) is seen once the reuse time is over.
    now = 1_000;
    expect(await tokens.token("T1")).toBe("xoxb-2");
    expect(asked).toEqual(["T1", "T1"]);
  });

  it("keeps workspaces apart", async () => {
    const { asked, ask } = asker(["xoxb-a", "xoxb-b"]);
    const tokens = new WorkerTokens(ask, 1_000, () => 0);
    expect(await tokens.token("TA")).toBe("xoxb-a");
    expect(await tokens.token("TB")).toBe("xoxb-b");
    expect(asked).toEqual(["TA", "TB"]);
  });

  it("never keeps a failed answer: an uninstalled or unreadable workspace is asked again", async () => {
    const { asked, ask } = asker([new Error("no installation"), "xoxb-back"]);
    const tokens = new WorkerTokens(ask, 1_000, () => 0);
    await expect(tokens.token("T1")).rejects.toThrow("no installation");
    expect(await tokens.token("T1")).toBe("xoxb-back");
    expect(asked).toEqual(["T1", "T1"]);
  });

  it("gives up on an answer that never comes, tells the asker, and asks again next time", async () => {
    const signals: AbortSignal[] = [];
    let answer: ((t: string) => void) | undefined;
    const ask = (_team: string, givenUp: AbortSignal) => {
      signals.push(givenUp);
      // The first ask is lost on its way (never answered); the second is answered.
      return new Promise<string>((resolve) => {
        if (signals.length > 1) answer = resolve;
      });
    };
    const tokens = new WorkerTokens(ask, 1_000, () => 0, 50);
    await expect(tokens.token("T1")).rejects.toThrow(/no token for T1 .* within 50 ms/);
    expect(signals[0]?.aborted).toBe(true);
    const second = tokens.token("T1");
    answer?.("xoxb-late");
    expect(await second).toBe("xoxb-late");
    expect(signals[1]?.aborted).toBe(false);
  });
});
