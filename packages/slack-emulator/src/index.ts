/**
 * @onair/slack-emulator: an emulated Slack workspace over real HTTP, held to Slack's published
 * method reference, and a driver that plays Slack towards an app. See README.md.
 */

export { autolinkedUrls, autolinksInText, linkedAsStored } from "./autolinks.ts";
export {
  type BlockKitResult,
  LIMITS,
  type Surface,
  validateBlocks,
  validateView,
} from "./blockkit.ts";
export {
  type BlockActionInput,
  createSlackDriver,
  type Delivery,
  DriverError,
  type DriverResult,
  type Forgery,
  type FunctionExecutedInput,
  type SendOptions,
  type SlackDriver,
  type SlackDriverOptions,
  signSlackRequest,
  type ViewSubmissionInput,
  type ViewSubmissionResult,
} from "./driver/index.ts";
export { openWorkObject, pressFlexpaneAction } from "./entity-events.ts";
export { SlackApiError } from "./errors.ts";
export {
  type Mention,
  type MentionKind,
  mentionsInBlocks,
  mentionsInText,
  type Notification,
} from "./mentions.ts";
export { type CallUser, callsOf, type EmulatedCall } from "./methods/calls.ts";
export { fileJson, fileState, type StoredFile } from "./methods/files.ts";
export { METHODS, type MethodSpec } from "./methods/index.ts";
export {
  DEFAULT_PER_CHANNEL,
  NON_MARKETPLACE_PAGE,
  type RateLimit,
  type RateLimits,
} from "./ratelimit.ts";
export {
  COMMON_ERRORS,
  type MethodFacts,
  methodFacts,
  REFERENCE_SOURCE,
  referenceMethods,
} from "./reference/index.ts";
export {
  DEFAULT_APP,
  DEFAULT_CHANNELS,
  DEFAULT_TEAM,
  DEFAULT_USERGROUPS,
  DEFAULT_USERS,
  type SeedChannel,
  type SeedEnterprise,
  type SeedUser,
  type SeedUsergroup,
  type WorkspaceSeed,
} from "./seed.ts";
export {
  type CallRecord,
  type SlackEmulator,
  type SlackEmulatorOptions,
  type SlowRule,
  startSlackEmulator,
  type ThrottleRule,
} from "./server.ts";
export { type Directory, escapeSlashText, linkNames, suggest } from "./slash-text.js";
export {
  initialState,
  isEmptyState,
  optionObject,
  stateFromValues,
  stateShape,
  VIEW_STATE,
} from "./view-state.js";
export {
  entityProblems,
  flexpanesFor,
  type PresentedFlexpane,
  setWorkObjects,
  type WorkObjectsSetting,
  workObjectsOf,
} from "./work-objects.ts";
export {
  type Channel,
  createWorkspace,
  type EphemeralMessage,
  type FunctionDefinition,
  type FunctionExecution,
  type FunctionParameter,
  type Json,
  type Message,
  type ScheduledMessage,
  type SlackView,
  type User,
  type ViewOutcome,
  type ViewRecord,
  Workspace,
} from "./workspace.ts";
