/**
 * What the domain asks of Slack about people and channels. Listeners hand in an implementation
 * (src/slack/directory.ts, over the Web API with caches); domain actions never see a Slack client.
 */

export interface SlackProfile {
  id: string;
  email: string | undefined;
  tz: string | undefined;
  /**
   * Workspace admin, owner or primary owner of this workspace: never a person of another
   * workspace (a Slack Connect channel), whatever their own workspace made them.
   */
  isAdmin: boolean;
  /** A single- or multi-channel guest (absent: not one). */
  isGuest?: boolean;
  name: string;
}

export interface Directory {
  profile(user: string): Promise<SlackProfile>;
  /** Members of a user group; may lag Slack by a few minutes (cached). */
  groupMembers(usergroup: string): Promise<readonly string[]>;
  /** The Slack user with this e-mail, if any. */
  userByEmail(email: string): Promise<string | undefined>;
  /** Whether the user is a member of the channel (false when the app cannot see the channel). */
  isChannelMember(channel: string, user: string): Promise<boolean>;
  /**
   * Whether the app can post in the channel: "hidden" is a private channel it is not in (Slack
   * shows it no such channel), "archived" takes no posts. Never cached: an invite takes effect
   * at once.
   */
  appReach(channel: string): Promise<ChannelReach>;
}

export type ChannelReach = "ok" | "hidden" | "archived";

/** Who is acting, in which workspace, and how to look people up there. */
export interface Actor {
  readonly team: string;
  readonly user: string;
  readonly directory: Directory;
}
