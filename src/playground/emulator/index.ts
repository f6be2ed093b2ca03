export {
  type BlockKitResult,
  LIMITS,
  type Surface,
  validateBlocks,
  validateView,
} from "./blockkit.ts";
export { SlackApiError } from "./errors.ts";
export { METHODS } from "./methods.ts";
export {
  ALL_BOT_SCOPES,
  DEFAULT_APP,
  DEFAULT_CHANNELS,
  DEFAULT_TEAM,
  DEFAULT_USERGROUPS,
  DEFAULT_USERS,
  type SeedChannel,
  type SeedUser,
  type SeedUsergroup,
  type WorkspaceSeed,
} from "./seed.ts";
export {
  type CallRecord,
  type RateLimit,
  type SlackEmulator,
  type SlackEmulatorOptions,
  startSlackEmulator,
  type ThrottleRule,
} from "./server.ts";
export {
  type Channel,
  createWorkspace,
  type EphemeralMessage,
  type Message,
  type ScheduledMessage,
  type SlackView,
  type User,
  type ViewOutcome,
  type ViewRecord,
  Workspace,
} from "./workspace.ts";
