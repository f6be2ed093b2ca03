import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ROUTES } from "../../src/http/routes.ts";

/**
 * The shipped deployment files say what the README's Deploy section says: the proxy routes
 * exactly the documented paths (never /metrics or /readyz).
 */

const ROOT = resolve(import.meta.dirname, "../..");
const read = (f: string) => readFileSync(resolve(ROOT, f), "utf8");

/** The paths the README tells a load balancer to route. */
function readmeRoutes(): string[] {
  const m = /route ((?:`[^`]+`(?:, | and )?)+) to every instance/.exec(read("README.md"));
  expect(m, "the README's Deploy section names the paths to route").not.toBeNull();
  return [...(m?.[1] ?? "").matchAll(/`([^`]+)`/g)].map((x) => x[1] as string).sort();
}

/** Caddy's path matcher: `*` at the end matches any rest. */
const matches = (pattern: string, path: string) =>
  pattern.endsWith("*") ? path.startsWith(pattern.slice(0, -1)) : path === pattern;

describe("deploy/Caddyfile", () => {
  const caddy = read("deploy/Caddyfile")
    .split("\n")
    .filter((l) => !l.trim().startsWith("#"))
    .join("\n");

  it("proxies exactly the paths the README names, and answers 404 to the rest", () => {
    const matcher = /@(\w+) path ([^\n]+)/.exec(caddy);
    expect(matcher, "a named path matcher").not.toBeNull();
    const [, name, list] = matcher as RegExpExecArray;
    const proxied = (list as string).trim().split(/\s+/).sort();
    expect(proxied).toEqual(readmeRoutes());
    expect(proxied).toEqual(["/healthz", "/slack/*", "/webhooks/*"]);

    // One reverse_proxy, inside the handle for that matcher; everything else is a 404.
    expect(caddy.match(/reverse_proxy/g)).toHaveLength(1);
    const handle = new RegExp(`handle @${name} \\{\\s*reverse_proxy`).test(caddy);
    expect(handle).toBe(true);
    expect(caddy).toMatch(/handle \{\s*respond 404\s*\}/);

    for (const inside of [ROUTES.metrics, ROUTES.readyz, `${ROUTES.sandbox}control/log`, "/"]) {
      expect({ inside, proxied: proxied.some((p) => matches(p, inside)) }).toEqual({
        inside,
        proxied: false,
      });
    }
    for (const outside of [ROUTES.slackEvents, ROUTES.slackInstall, `${ROUTES.webhook}x`]) {
      expect(proxied.some((p) => matches(p, outside))).toBe(true);
    }
  });

  it("checks instances on /readyz from inside", () => {
    expect(caddy).toMatch(/health_uri \/readyz/);
  });
});
