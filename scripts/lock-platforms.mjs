#!/usr/bin/env node
// Adds the platform-specific optional packages (esbuild, rollup, biome binaries for other
// operating systems) that npm 11 leaves out of package-lock.json, while its own `npm ci` then
// refuses the lock as "Missing: … from lock file". Works around npm/cli#4828 and #8320.
// Run after any dependency change: `node scripts/lock-platforms.mjs`.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const lockPath = new URL("../package-lock.json", import.meta.url);
const lock = JSON.parse(readFileSync(lockPath, "utf8"));
const pkgs = lock.packages;
let added = 0;

// The registry reachable here does not carry every platform binary; for one it lacks, the os and
// cpu are read off the package name, which is all `npm ci` needs to skip it on this platform.
function view(name, range) {
  try {
    const info = JSON.parse(
      execFileSync(
        "npm",
        [
          "view",
          `${name}@${range}`,
          "version",
          "dist",
          "os",
          "cpu",
          "libc",
          "license",
          "engines",
          "--json",
        ],
        {
          encoding: "utf8",
          stdio: ["ignore", "pipe", "ignore"],
        },
      ),
    );
    return Array.isArray(info) ? info[info.length - 1] : info;
  } catch {
    const tail = name.split("/").pop();
    const os = [
      "android",
      "darwin",
      "win32",
      "linux",
      "freebsd",
      "openbsd",
      "netbsd",
      "sunos",
      "aix",
      "openharmony",
      "cygwin",
    ].find((o) => tail.includes(o));
    const cpu = [
      "arm64",
      "x64",
      "ia32",
      "arm",
      "loong64",
      "mips64el",
      "ppc64",
      "riscv64",
      "s390x",
      "wasm32",
    ].find((c) => tail.includes(c));
    return {
      version: range.replace(/^[\^~=]/, ""),
      ...(os ? { os: [os] } : {}),
      ...(cpu ? { cpu: [cpu] } : {}),
      ...(tail.includes("musl") ? { libc: ["musl"] } : {}),
    };
  }
}
for (const [path, entry] of Object.entries(pkgs)) {
  if (!path || !entry.optionalDependencies) continue;
  const base = path.slice(0, path.lastIndexOf("node_modules/"));
  for (const [name, range] of Object.entries(entry.optionalDependencies)) {
    const candidates = [
      `${path}/node_modules/${name}`,
      `${base}node_modules/${name}`,
      `node_modules/${name}`,
    ];
    if (candidates.some((c) => pkgs[c])) continue;
    const v = view(name, range);
    const target = pkgs[`node_modules/${name}`]
      ? `${path}/node_modules/${name}`
      : `node_modules/${name}`;
    pkgs[target] = {
      version: v.version,
      ...(v.dist ? { integrity: v.dist.integrity } : {}),
      ...(v.cpu ? { cpu: v.cpu } : {}),
      ...(entry.dev ? { dev: true } : {}),
      ...(v.engines ? { engines: v.engines } : {}),
      ...(v.libc ? { libc: v.libc } : {}),
      ...(v.license ? { license: v.license } : {}),
      optional: true,
      ...(v.os ? { os: v.os } : {}),
    };
    added++;
  }
}
const sorted = Object.fromEntries(
  Object.entries(pkgs).sort(([a], [b]) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b))),
);
lock.packages = sorted;
writeFileSync(lockPath, `${JSON.stringify(lock, null, 2)}\n`);
process.stdout.write(`lock-platforms: added ${added} platform packages\n`);
