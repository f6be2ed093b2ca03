import reference from "./web-api-methods.json" with { type: "json" };

/**
 * Slack's published facts about each Web API method, as the fixture beside this file holds them
 * (its `source` names where they come from). The emulator's method table is derived from these:
 * which scopes a token needs, which arguments are required or accepted, which argument groups
 * apply, the rate tier, and which errors a method may answer. Nothing here is the emulator's own
 * opinion; `observed` below is the only list that goes beyond the reference, each entry cited.
 */

export type RateTier = "t1" | "t2" | "t3" | "t4" | "t5";

export interface ArgGroup {
  readonly args: readonly string[];
  /** true: at most one of them (exactly one unless `required` is false) */
  readonly mutually_exclusive: boolean;
  /** false: the group may be left out entirely */
  readonly required?: boolean;
}

export interface MethodFacts {
  readonly name: string;
  readonly httpMethod: "GET" | "POST";
  readonly tier: RateTier;
  /** any one of these will do; empty: no scope needed */
  readonly scopes: { readonly bot: readonly string[]; readonly user: readonly string[] };
  readonly required: readonly string[];
  /** every argument the method takes (`token` aside) */
  readonly accepted: ReadonlySet<string>;
  readonly argGroups: readonly ArgGroup[];
  /** the errors documented for this method, common ones included */
  readonly errors: ReadonlySet<string>;
}

interface RawMethod {
  args: string[];
  errors: string[];
  http_method: string;
  rate_tier: string;
  required_args: string[];
  scopes: { bot?: string[]; user?: string[] };
  arg_groups?: ArgGroup[];
}

const raw = reference as unknown as {
  source: string;
  rate_tiers: Record<"t1" | "t2" | "t3" | "t4", number>;
  common_errors: string[];
  common_errors_older_scrape: string[];
  methods: Record<string, RawMethod>;
};

export const REFERENCE_SOURCE: string = raw.source;

/** Requests per minute per method per workspace per app, by tier (t5 is special: see ratelimit.ts). */
export const TIER_PER_MINUTE: Readonly<Record<"t1" | "t2" | "t3" | "t4", number>> = raw.rate_tiers;

/** Errors any method may answer (authentication, transport, rate limits). */
export const COMMON_ERRORS: ReadonlySet<string> = new Set([
  ...raw.common_errors,
  ...raw.common_errors_older_scrape,
]);

/**
 * Answers Slack gives that its reference does not list, each with where it was seen. Kept to the
 * transport: a JSON body Slack cannot parse.
 */
export const OBSERVED_TRANSPORT_ERRORS: Readonly<Record<string, string>> = {
  invalid_json: "a JSON body that does not parse (coursehero/slacktee#75)",
  json_not_object: "a JSON body that is not an object (abinoda/slack-action#19)",
};

/**
 * Answers of one method that its reference page does not list, each with where Slack was seen
 * giving it.
 */
export const OBSERVED_METHOD_ERRORS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "chat.unfurl": {
    invalid_blocks:
      "an unfurl whose blocks Slack will not take (slackapi/java-slack-sdk#948: ChatUnfurlResponse error=invalid_blocks)",
  },
};

const cache = new Map<string, MethodFacts>();

/** The reference's facts for one method, or undefined when Slack's reference has no such method. */
export function methodFacts(name: string): MethodFacts | undefined {
  const hit = cache.get(name);
  if (hit) return hit;
  const m = Object.hasOwn(raw.methods, name) ? raw.methods[name] : undefined;
  if (!m) return undefined;
  const facts: MethodFacts = {
    name,
    httpMethod: m.http_method === "GET" ? "GET" : "POST",
    tier: (["t1", "t2", "t3", "t4", "t5"].includes(m.rate_tier) ? m.rate_tier : "t3") as RateTier,
    scopes: { bot: m.scopes.bot ?? [], user: m.scopes.user ?? [] },
    required: m.required_args,
    accepted: new Set(m.args),
    argGroups: m.arg_groups ?? [],
    errors: new Set([
      ...m.errors,
      ...COMMON_ERRORS,
      ...Object.keys(OBSERVED_METHOD_ERRORS[name] ?? {}),
    ]),
  };
  cache.set(name, facts);
  return facts;
}

/** Every method the reference holds. */
export function referenceMethods(): string[] {
  return Object.keys(raw.methods).sort();
}
