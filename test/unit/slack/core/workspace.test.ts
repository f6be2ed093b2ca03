import { describe, expect, it } from "vitest";
import { actingWorkspace, enterpriseOf, isOrgInstall } from "../../../../src/slack/workspace.ts";

/**
 * The one rule for "which workspace", on payloads shaped as Slack sends them
 * (../shared/slack-reference/events-and-payloads.json).
 */

describe("the acting workspace", () => {
  it("an org-wide view_submission: the person's workspace, not app_installed_team_id", () => {
    const body = {
      type: "view_submission",
      team: null,
      enterprise: { id: "E1", name: "Org" },
      is_enterprise_install: true,
      user: { id: "U1", name: "sam", team_id: "T2" },
      view: {
        id: "V1",
        callback_id: "x",
        app_installed_team_id: "E1",
        team_id: "T2",
        state: { values: {} },
      },
    };
    expect(actingWorkspace(body)).toBe("T2");
    expect(enterpriseOf(body)).toBe("E1");
    expect(isOrgInstall(body)).toBe(true);
  });

  it("a button in a Slack Connect channel: the acting person's team, not the channel's", () => {
    const body = {
      type: "block_actions",
      team: { id: "T1", domain: "host" },
      user: { id: "U9", username: "pat", team_id: "T9" },
      actions: [],
    };
    expect(actingWorkspace(body)).toBe("T9");
    expect(isOrgInstall(body)).toBe(false);
  });

  it("a slash command: the workspace it was typed in", () => {
    const body = {
      command: "/onair",
      team_id: "T2",
      enterprise_id: "E1",
      is_enterprise_install: "true",
    };
    expect(actingWorkspace(body)).toBe("T2");
    expect(isOrgInstall(body)).toBe(true);
  });

  it("events: context_team_id; an org-level event names no workspace", () => {
    const auth = [{ enterprise_id: "E1", team_id: null, is_enterprise_install: true }];
    const inWorkspace = {
      type: "event_callback",
      team_id: "T2",
      context_team_id: "T2",
      authorizations: auth,
      event: { type: "app_home_opened" },
    };
    expect(actingWorkspace(inWorkspace)).toBe("T2");
    const orgLevel = {
      type: "event_callback",
      team_id: "E1",
      authorizations: auth,
      event: { type: "app_uninstalled" },
    };
    expect(actingWorkspace(orgLevel)).toBeUndefined();
    expect(isOrgInstall(orgLevel)).toBe(true);
    const plain = {
      type: "event_callback",
      team_id: "T1",
      authorizations: [{ enterprise_id: null, team_id: "T1", is_enterprise_install: false }],
      event: { type: "app_home_opened" },
    };
    expect(actingWorkspace(plain)).toBe("T1");
    expect(isOrgInstall(plain)).toBe(false);
  });
});
