/** The fixed credentials of the sandbox (README: "The sandbox"). Not secrets. */
export const SANDBOX_SEEDS = {
  relay: { username: "sandbox", password: "sandbox" },
  events: { clientId: "sandbox-key", clientSecret: "sandbox-secret" },
} as const satisfies {
  relay: { username: "sandbox"; password: "sandbox" };
  events: { clientId: "sandbox-key"; clientSecret: "sandbox-secret" };
};

/** One enterprise stands behind both services: relay id "1001" is events enterpriseId 1001. */
export const SANDBOX_ENTERPRISE_ID = 1001;

export const SANDBOX_ENTERPRISE = {
  id: String(SANDBOX_ENTERPRISE_ID),
  name: SANDBOX_SEEDS.relay.username,
  label: "Sandbox Enterprise",
  password: null,
  tags: [] as never[],
  publicKey: null,
  pointOfContact: "admin@example.com",
} as const;

/** Every address at this domain is a registered user of the events service. */
export const SANDBOX_USER_DOMAIN = "example.com";

/** Seconds; the spec leaves the unit open, the app reads seconds. */
export const EVENTS_TOKEN_EXPIRES_IN = 3600;
