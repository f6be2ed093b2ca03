import { DEFAULT_USERS } from "@onair/slack-emulator";
import { afterAll, beforeAll, expect, it } from "vitest";
import { STEP_DEFINITIONS, STEPS } from "../../src/slack/functions/definitions.ts";
import { type Harness, startHarness, TEAM, USERS } from "../helpers/app-harness.ts";
import { eventually } from "../helpers/live-fixtures.ts";
import { future, HOUR } from "./organizer-helpers.ts";

/**
 * Workflow Builder offers custom steps only to an app installed at the org level: the steps run
 * on the org-wide installation, in the workspace the workflow runs in, and keep that workspace's
 * records under its own team id.
 */

const ORG = "E0ORGWIDE";
const SECOND = "T0SECOND";
const SAM = "U0SAM0SECOND";

let h: Harness;
beforeAll(async () => {
  h = await startHarness({
    oauth: true,
    seed: {
      functions: STEP_DEFINITIONS,
      enterprise: {
        id: ORG,
        name: "Org Wide Inc",
        teams: [{ id: SECOND, name: "Second", domain: "second" }],
      },
      orgInstall: true,
      users: [
        ...DEFAULT_USERS,
        {
          id: SAM,
          name: "sam",
          real_name: "Sam Second",
          tz: "Europe/London",
          email: "sam@example.com",
          team_id: SECOND,
        },
      ],
    },
  });
  const r = await h.driver.oauthInstall();
  expect(r.callback.status).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

async function schedule(organizer: string, title: string, team?: string) {
  const start = future(3);
  const r = await h.driver.functionExecuted({
    callback_id: STEPS.schedule,
    inputs: {
      title,
      start: Math.floor(start / 1000),
      end: Math.floor((start + HOUR) / 1000),
      organizer,
    },
    ...(team ? { team } : {}),
  });
  expect(r.status).toBe(200);
  const ex = r.execution;
  await eventually(() => (ex.state === "running" ? undefined : true), "the completion");
  return ex;
}

it("schedules in the workspace the workflow runs in, under that workspace", async () => {
  const first = await schedule(USERS.omar, "Org step, first workspace");
  expect(first.state).toBe("completed");
  const second = await schedule(SAM, "Org step, second workspace", SECOND);
  expect(second.state).toBe("completed");
  const titles = async (team: string) => (await h.app.store.events.list(team)).map((e) => e.title);
  expect(await titles(TEAM)).toEqual(["Org step, first workspace"]);
  expect(await titles(SECOND)).toEqual(["Org step, second workspace"]);
  // Nothing but the installation under the enterprise id; each run's claim under its workspace.
  const keys = await h.app.store.keys("");
  expect(keys.filter((k) => k.split(":")[1] === ORG)).toEqual([`install:${ORG}`]);
  expect(keys.filter((k) => k.startsWith(`fn-step:${SECOND}:`))).toHaveLength(1);
});
