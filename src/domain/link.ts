import type { Deps } from "../deps.ts";
import type { UserLink } from "../store/index.ts";
import { linkUser } from "./access.ts";
import type { Actor } from "./directory.ts";

/** `/onair link`: by the user's Slack e-mail; a plain refusal when it is not an upstream user. */
export function link(deps: Deps, actor: Actor): Promise<UserLink> {
  return linkUser(deps, actor, { askAgain: true });
}

/** `/onair unlink`: forgets the link and drops the user's cached upstream token. */
export async function unlink(deps: Deps, actor: Actor): Promise<UserLink | undefined> {
  const existing = await deps.store.users.get(actor.team, actor.user);
  if (!existing) return undefined;
  await deps.store.users.delete(actor.team, actor.user);
  await deps.tokens.invalidateUser(actor.team, existing.email);
  return existing;
}

/** `/onair whoami`: the linked account, read from the store only (it mints and calls nothing). */
export async function whoami(
  deps: Deps,
  actor: Actor,
): Promise<{ link: UserLink | undefined; isAdmin: boolean }> {
  const [link, profile] = await Promise.all([
    deps.store.users.get(actor.team, actor.user),
    actor.directory.profile(actor.user),
  ]);
  return { link, isAdmin: profile.isAdmin };
}
