import type { DriverContext } from "./context.ts";
import { DriverError } from "./state.ts";
import type { OAuthInstallOptions } from "./types.ts";

/** The OAuth install as a browser does it, through the app's pages and the emulator's. */

export async function oauthInstall(ctx: DriverContext, o: OAuthInstallOptions = {}) {
  const { userOf, readResult, timeoutMs, appUrl } = ctx;
  const installRes = await fetch(`${appUrl}${o.installPath ?? "/slack/install"}`, {
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  const cookies = installRes.headers
    .getSetCookie()
    .map((c) => c.split(";")[0])
    .join("; ");
  const install = { ...(await readResult(installRes)), payload: {} };
  let authorizeUrl = installRes.headers.get("location") ?? undefined;
  if (authorizeUrl === undefined && typeof install.body === "string") {
    const m = /href="([^"]*\/oauth\/v2\/authorize[^"]*)"/.exec(install.body);
    authorizeUrl = m?.[1]?.replaceAll("&amp;", "&");
  }
  if (authorizeUrl === undefined) {
    throw new DriverError(`the install page (HTTP ${install.status}) links to no authorize URL`);
  }
  const auth = new URL(authorizeUrl, appUrl);
  if (`${auth.origin}${auth.pathname}` !== ctx.authorizeUrl) {
    throw new DriverError(
      `the app sends installers to ${auth.origin}${auth.pathname}, not the emulator's ${ctx.authorizeUrl}`,
    );
  }
  if (o.user !== undefined) auth.searchParams.set("user", userOf(o.user).id);
  if (o.deny) auth.searchParams.set("deny", "1");
  const authRes = await fetch(auth, {
    redirect: "manual",
    signal: AbortSignal.timeout(timeoutMs),
  });
  const callbackUrl = authRes.headers.get("location");
  await authRes.arrayBuffer();
  if (authRes.status !== 302 || callbackUrl === null) {
    throw new DriverError(`the emulator refused the authorization (HTTP ${authRes.status})`);
  }
  const cbRes = await fetch(callbackUrl, {
    redirect: "manual",
    headers: cookies === "" ? {} : { cookie: cookies },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const callback = { ...(await readResult(cbRes)), payload: {} };
  return { install, authorizeUrl: auth.toString(), callbackUrl, callback };
}
