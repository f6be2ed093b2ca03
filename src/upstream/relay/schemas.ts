import { z } from "zod";

/** Shapes from shared/spec/relay-service.md, "Resources and their fields". */

export const RELAY_ROLES = ["ROLE_READONLY", "ROLE_READWRITE"] as const;

export const accessTokenSchema = z.object({
  accessToken: z.string().min(1),
  clientName: z.string().nullable(),
  creationDate: z.number().int(),
  enterpriseName: z.string(),
  /** null: the token never expires (created with duration -1). */
  expirationDate: z.number().int().nullable(),
  /** Values beyond the two shown may exist, so any string is kept. */
  roles: z.array(z.string()),
});
export type AccessToken = z.output<typeof accessTokenSchema>;

export const accessTokenListSchema = z.array(accessTokenSchema);

export const enterpriseSchema = z.object({
  id: z.string(),
  name: z.string(),
  label: z.string(),
  // Returned as null; the non-null type is not shown, so nothing is assumed about it.
  password: z.unknown().nullable(),
  tags: z.array(z.unknown()),
  publicKey: z.unknown().nullable(),
  pointOfContact: z.string(),
});
export type Enterprise = z.output<typeof enterpriseSchema>;

export const relayErrorBodySchema = z.object({
  errorCode: z.number().int(),
  errorName: z.string(),
  errorMessage: z.string(),
  errorDetails: z.record(z.string(), z.unknown()).nullable(),
});
export type RelayErrorBody = z.output<typeof relayErrorBodySchema>;
