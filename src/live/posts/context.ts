import type { WebClient } from "@slack/web-api";
import type { ChannelPosting } from "../live-record.ts";
import type { PostPort } from "../post-once.ts";

/** What a post spec is given: the port, the channel, its posting state, and a client. */
export interface PostContext {
  readonly port: PostPort;
  readonly ch: string;
  /** The channel's posting state in the runner's model; a spec records into it. */
  readonly c: ChannelPosting;
  readonly client: WebClient;
}
