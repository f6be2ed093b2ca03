/**
 * The relay service error catalog, transcribed from shared/spec/relay-service.md (all 38 rows).
 * Shared by the relay client (to type errors) and the sandbox (to inject them).
 * `userMessage` is what a Slack user reads: the meaning in plain words and a next step.
 */
export const RELAY_ERROR_CATALOG = {
  AuthenticationFailed: {
    status: 502,
    errorCode: 1780355652,
    detailsKeys: [
      "causes",
      "remoteResponse",
      "listenerServiceId",
      "remoteAddress",
      "remoteRequest",
      "command",
      "remoteId",
      "remoteName",
    ],
    meaning: "Remote endpoint rejected the credentials; probably provisioned incorrectly.",
    userMessage:
      "A video endpoint turned down the relay's credentials, so it is probably set up wrongly. Ask your relay admin to check that endpoint's provisioning, then try again.",
  },
  BadCommand: {
    status: 500,
    errorCode: 47328961,
    detailsKeys: ["commandName", "causes", "listenerServiceId"],
    meaning: "Listener service could not parse the command.",
    userMessage:
      "The relay's listener service could not understand the request. Try again; if it keeps happening, ask your relay admin to check the listener service.",
  },
  BadCredentialsException: {
    status: 401,
    errorCode: 1285563821,
    detailsKeys: ["errorMessage", "errorCode"],
    meaning: "Not authorized.",
    userMessage:
      "The relay did not accept the credentials On Air has for it. A workspace admin can fix them in `/onair settings` and press Check.",
  },
  CalendarServerException: {
    status: 502,
    errorCode: 187263818,
    detailsKeys: ["calendarId", "message"],
    meaning: "Details could not be retrieved from the calendar server.",
    userMessage:
      "The relay could not get details from the calendar server. Try again in a few minutes; if it persists, ask your relay admin to check the calendar connection.",
  },
  CommandTimedOut: {
    status: 504,
    errorCode: 1331991805,
    detailsKeys: ["commandName", "causes", "listenerServiceId"],
    meaning: "Request to the listener service timed out.",
    userMessage: "The relay's listener service took too long to answer. Try again in a minute.",
  },
  DuplicateCalendarId: {
    status: 400,
    errorCode: 1782937294,
    detailsKeys: ["message", "cause"],
    meaning: "Calendar identifier already exists.",
    userMessage:
      "That calendar is already registered with the relay. Use the existing one or pick another calendar.",
  },
  EncryptionUpdated: {
    status: 500,
    errorCode: 1065375345,
    detailsKeys: ["message"],
    meaning:
      "The public key used for endpoint password encryption was updated, deleted or added; the password must be entered again.",
    userMessage:
      "The relay's endpoint password key changed, so the endpoint password must be entered again. Ask your relay admin to re-enter it, then try again.",
  },
  EndpointHasNoListenerService: {
    status: 500,
    errorCode: 1881171133,
    detailsKeys: ["commandName", "endpointName", "listenerServiceId"],
    meaning: "No listener service is provisioned for the endpoint.",
    userMessage:
      "No listener service is set up for that endpoint. Ask your relay admin to provision one, then try again.",
  },
  ExternalSystemException: {
    status: 500,
    errorCode: 837158652,
    detailsKeys: ["commandName", "causes", "message", "remoteAddress", "remoteId", "remoteName"],
    meaning: "Listener service could not communicate with an external system.",
    userMessage:
      "The relay could not talk to an external system. Try again in a few minutes; if it persists, tell your relay admin.",
  },
  ExternalSystemResponseException: {
    status: 500,
    errorCode: 1417554097,
    detailsKeys: [
      "commandName",
      "causes",
      "remoteResponse",
      "remoteAddress",
      "remoteRequest",
      "remoteId",
      "remoteName",
    ],
    meaning: "The external system answered with an error.",
    userMessage:
      "An external system answered the relay with an error. Try again; if it persists, tell your relay admin which endpoint was involved.",
  },
  ExternalSystemTimedOut: {
    status: 504,
    errorCode: 594923066,
    detailsKeys: [
      "causes",
      "listenerServiceId",
      "remoteAddress",
      "command",
      "remoteId",
      "remoteName",
    ],
    meaning: "Request to the external system timed out.",
    userMessage: "An external system did not answer the relay in time. Try again in a minute.",
  },
  ExternalSystemUnreachable: {
    status: 504,
    errorCode: 1436062998,
    detailsKeys: [
      "causes",
      "listenerServiceId",
      "remoteAddress",
      "command",
      "remoteId",
      "remoteName",
    ],
    meaning: "External system could not be reached.",
    userMessage:
      "The relay could not reach an external system. Check that the endpoint is online, then try again.",
  },
  ForwardsCompatibility: {
    status: 501,
    errorCode: 2123224504,
    detailsKeys: ["listenerServiceVersion", "commandName", "listenerServiceId"],
    meaning: "Listener service is out of date and must be upgraded.",
    userMessage:
      "The relay's listener service is out of date. Ask your relay admin to upgrade it, then try again.",
  },
  IncorrectlyProvisioned: {
    status: 502,
    errorCode: 1917844536,
    detailsKeys: [
      "causes",
      "message",
      "remoteResponse",
      "listenerServiceId",
      "remoteAddress",
      "remoteRequest",
      "command",
      "remoteId",
      "remoteName",
    ],
    meaning: "Endpoint is not provisioned correctly (message carries the remote status).",
    userMessage:
      "A video endpoint is not set up correctly on the relay. Ask your relay admin to check its provisioning, then try again.",
  },
  Invalid: {
    status: 400,
    errorCode: 1782937293,
    detailsKeys: ["message", "cause"],
    meaning: "An entity was invalid.",
    userMessage:
      "The relay found something in the request invalid. Check the values you entered and try again.",
  },
  InvalidDtmf: {
    status: 400,
    errorCode: 1782937295,
    detailsKeys: ["message", "cause"],
    meaning: "Invalid value (message: must be valid).",
    userMessage: "The relay rejected a DTMF value as invalid. Check the value and try again.",
  },
  InvalidListSize: {
    status: 403,
    errorCode: 1782937296,
    detailsKeys: ["message", "cause"],
    meaning: "Invalid list size (message: must be valid).",
    userMessage:
      "The relay rejected the size of a list in the request. Use fewer items and try again.",
  },
  JsonMappingException: {
    status: 500,
    errorCode: 12789219,
    detailsKeys: ["pathReference", "message"],
    meaning: "Malformed JSON body.",
    userMessage:
      "The relay could not read the request it was sent. Try again; if it keeps happening, report it to the On Air maintainers.",
  },
  JsonParseException: {
    status: 500,
    errorCode: 12789218,
    detailsKeys: null,
    meaning: "Malformed JSON body.",
    userMessage:
      "The relay could not read the request it was sent. Try again; if it keeps happening, report it to the On Air maintainers.",
  },
  LimitReached: {
    status: 403,
    errorCode: 1881171140,
    detailsKeys: ["entityClass"],
    meaning: "Endpoint limit reached.",
    userMessage:
      "Your enterprise has reached its endpoint limit on the relay. Ask your relay admin to remove unused endpoints or raise the limit.",
  },
  ListenerOffline: {
    status: 503,
    errorCode: 208581637,
    detailsKeys: ["listenerServiceId"],
    meaning: "Listener service is offline.",
    userMessage:
      "The relay's listener service is offline. Try again later, or ask your relay admin to bring it back.",
  },
  ListenerServiceException: {
    status: 500,
    errorCode: 1296998295,
    detailsKeys: ["commandName", "causes", "listenerServiceId"],
    meaning: "Listener service failed while handling a command.",
    userMessage:
      "The relay's listener service failed while handling the request. Try again; if it persists, tell your relay admin.",
  },
  MessagingException: {
    status: 502,
    errorCode: 72013363,
    detailsKeys: ["commandName", "causes", "listenerServiceId"],
    meaning: "Unable to communicate with the listener service.",
    userMessage: "The relay could not reach its listener service. Try again in a few minutes.",
  },
  NoSuchHandler: {
    status: 501,
    errorCode: 424016482,
    detailsKeys: ["listenerServiceVersion", "commandName", "listenerServiceId"],
    meaning: "Listener service is out of date and must be upgraded.",
    userMessage:
      "The relay's listener service is out of date. Ask your relay admin to upgrade it, then try again.",
  },
  NotAuthenticated: {
    status: 401,
    errorCode: 1285563822,
    detailsKeys: ["errorMessage", "errorCode"],
    meaning: "Not authenticated.",
    userMessage:
      "On Air has no relay credentials to send. A workspace admin can add them in `/onair settings`.",
  },
  NotFound: {
    status: 404,
    errorCode: 1217481661,
    detailsKeys: ["entityClass", "entityId"],
    meaning: "No endpoint found with the given identifier.",
    userMessage:
      "The relay has no endpoint with that identifier. Check the identifier and try again.",
  },
  LiveApiException: {
    status: 500,
    errorCode: 123834739,
    detailsKeys: null,
    meaning: "Problem communicating with the live events service; retry later.",
    userMessage: "The relay had trouble talking to the live events service. Try again later.",
  },
  LiveEventNotStarted: {
    status: 405,
    errorCode: 748396429,
    detailsKeys: null,
    meaning: "The live meeting has not started.",
    userMessage: "The live event has not started yet. Try again once it is live.",
  },
  LiveNotAuthorized: {
    status: 403,
    errorCode: 598238723,
    detailsKeys: null,
    meaning: "The live meeting is not open to the public.",
    userMessage: "The live event is not open to the public. Ask the organizer for access.",
  },
  LiveNotFound: {
    status: 404,
    errorCode: 38393928,
    detailsKeys: null,
    meaning: "The live meeting was not found.",
    userMessage: "The relay could not find that live event. Check the event and try again.",
  },
  RecordingAuthException: {
    status: 502,
    errorCode: 502203690,
    detailsKeys: ["action", "meetingId", "meetingResponseCode"],
    meaning: "Not allowed to start recording the meeting; the moderator passcode may be needed.",
    userMessage:
      "Recording was not allowed to start for this meeting; the moderator passcode may be needed. Start it as a moderator, or ask the organizer.",
  },
  RecordingException: {
    status: 502,
    errorCode: 1843016393,
    detailsKeys: ["action", "meetingId", "meetingResponseCode"],
    meaning: "Unable to start recording because of an upstream error response.",
    userMessage:
      "Recording could not start because of an upstream error. Try again in a few minutes.",
  },
  RecordingProhibited: {
    status: 405,
    errorCode: 1143094451,
    detailsKeys: ["action", "meetingId", "meetingResponseCode"],
    meaning: "Recording is disabled for the meeting.",
    userMessage:
      "Recording is turned off for this meeting. The organizer can enable it on the event.",
  },
  RecordingQuotaExceeded: {
    status: 502,
    errorCode: 1843016394,
    detailsKeys: ["action", "meetingId", "meetingResponseCode"],
    meaning: "Unable to start recording because the recording quota is exceeded.",
    userMessage:
      "Recording could not start because the recording quota is used up. Ask your admin to free space or raise the quota.",
  },
  RemoteCommandException: {
    status: 500,
    errorCode: 1296998294,
    detailsKeys: null,
    meaning: "The remote system failed handling the command.",
    userMessage:
      "The remote system failed while handling the request. Try again; if it persists, tell your relay admin.",
  },
  Unavailable: {
    status: 503,
    errorCode: 2042734031,
    detailsKeys: [
      "causes",
      "remoteResponse",
      "listenerServiceId",
      "remoteAddress",
      "remoteRequest",
      "command",
      "remoteId",
      "remoteName",
    ],
    meaning: "Server error response from the endpoint.",
    userMessage:
      "A video endpoint answered with a server error. Try again later; if it persists, tell your relay admin.",
  },
  UnknownControlProtocol: {
    status: 501,
    errorCode: 941644305,
    detailsKeys: ["listenerServiceVersion", "commandName", "listenerServiceId"],
    meaning: "Listener service is out of date and must be upgraded.",
    userMessage:
      "The relay's listener service is out of date. Ask your relay admin to upgrade it, then try again.",
  },
  Unmodifiable: {
    status: 405,
    errorCode: 1867716210,
    detailsKeys: ["entityClass", "entityId"],
    meaning: "A dial style cannot be modified.",
    userMessage: "That dial style cannot be changed. Leave it as it is, or create a new one.",
  },
} as const satisfies Record<string, RelayCatalogEntry>;

export interface RelayCatalogEntry {
  readonly status: number;
  readonly errorCode: number;
  /** Keys of errorDetails; null when the service sends errorDetails: null. */
  readonly detailsKeys: readonly string[] | null;
  readonly meaning: string;
  readonly userMessage: string;
}

export type RelayErrorName = keyof typeof RELAY_ERROR_CATALOG;

export const RELAY_ERROR_NAMES = Object.keys(RELAY_ERROR_CATALOG) as RelayErrorName[];

export function isRelayErrorName(name: unknown): name is RelayErrorName {
  return typeof name === "string" && Object.hasOwn(RELAY_ERROR_CATALOG, name);
}

/**
 * Catalog errors that may pass if the same request is sent again a little later. Every other
 * catalog error describes a state that a retry cannot change, so the client does not retry it.
 */
export const RELAY_TRANSIENT_ERRORS: ReadonlySet<RelayErrorName> = new Set<RelayErrorName>([
  "CommandTimedOut",
  "ExternalSystemTimedOut",
  "ExternalSystemUnreachable",
  "ListenerOffline",
  "MessagingException",
  "LiveApiException",
  "Unavailable",
]);
