import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { expiresOf, serialize } from "../../../src/store/backends/types.ts";
import { createCipher, isEncrypted } from "../../../src/store/crypto.ts";
import { openStore, type Store, StoreError, timeOrderedId } from "../../../src/store/index.ts";
import { defineRepository, deleteTeamData, repositoryList } from "../../../src/store/repository.ts";

const cipher = createCipher(randomBytes(32));
const SECRET = "sk-live-NESTED-SECRET-123";

const vaultRepo = defineRepository({
  prefix: "vault",
  schema: z.object({
    team: z.string(),
    creds: z.object({ key: z.string(), extra: z.object({ pin: z.number() }).optional() }),
    note: z.string().optional(),
  }),
  encryptedFields: ["creds.key", "creds.extra", "note"],
  team: "key",
});

const stores: Store[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
});
async function memory(c = cipher, name = ""): Promise<Store> {
  const s = await openStore(`memory://${name}`, { cipher: c, sweepIntervalMs: 0 });
  stores.push(s);
  return s;
}

describe("defineRepository", () => {
  it("refuses bad prefixes, a prefix listed twice for one store, and an encrypted team field", () => {
    const schema = z.object({ team: z.string() });
    expect(() => defineRepository({ prefix: "Bad:prefix", schema, team: "none" })).toThrow(
      /must match/,
    );
    const again = defineRepository({ prefix: "vault", schema, team: "none" });
    expect(() => repositoryList([again, again])).toThrow(/listed twice/);
    expect(() =>
      defineRepository({
        prefix: "encteam",
        schema,
        encryptedFields: ["team"],
        team: { field: "team" },
      }),
    ).toThrow(/team field cannot be encrypted/);
  });
});

describe("a repository", () => {
  it("encrypts nested fields and whole sub-objects, and reads them back", async () => {
    const store = await memory();
    const vault = store.repository(vaultRepo);
    const rec = { team: "T1", creds: { key: SECRET, extra: { pin: 1234 } }, note: "n" };
    await vault.put("T1:one", rec);
    const raw = await store.get<{ creds: { key: unknown; extra: unknown }; note: unknown }>(
      "vault:T1:one",
    );
    expect(isEncrypted(raw?.creds.key)).toBe(true);
    expect(isEncrypted(raw?.creds.extra)).toBe(true);
    expect(isEncrypted(raw?.note)).toBe(true);
    expect(JSON.stringify(raw)).not.toContain(SECRET);
    expect(JSON.stringify(raw)).not.toContain("1234");
    expect(await vault.get("T1:one")).toEqual(rec);
    // Optional encrypted fields may be absent.
    await vault.put("T1:two", { team: "T1", creds: { key: SECRET } });
    expect(await vault.get("T1:two")).toEqual({ team: "T1", creds: { key: SECRET } });
    expect((await vault.list("T1:")).map((r) => r.id)).toEqual(["T1:one", "T1:two"]);
    expect(await vault.ids()).toEqual(["T1:one", "T1:two"]);
    // The caller's object is not modified by encryption.
    expect(rec.creds.key).toBe(SECRET);
  });

  it("reports a record it cannot decrypt or validate as corrupt, never as missing", async () => {
    const name = `shared-${randomBytes(4).toString("hex")}`;
    const store = await memory(cipher, name);
    const vault = store.repository(vaultRepo);
    await vault.put("T1:x", { team: "T1", creds: { key: SECRET } });

    const otherKey = await memory(createCipher(randomBytes(32)), name);
    const err = await otherKey
      .repository(vaultRepo)
      .get("T1:x")
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("store_corrupt");
    expect((err as StoreError).message).not.toContain(SECRET);

    await store.set("vault:T1:y", { team: "T1", creds: { key: 42 } });
    await expect(vault.get("T1:y")).rejects.toMatchObject({ code: "store_corrupt" });
    const blob = cipher.encrypt(JSON.stringify("k"), "vault:T1:z#creds.key");
    await store.set("vault:T1:z", { team: 7, creds: { key: blob } });
    await expect(vault.get("T1:z")).rejects.toMatchObject({ code: "store_corrupt" });
  });

  it("refuses a record that does not fit its schema, without echoing its values", async () => {
    const store = await memory();
    const bad = { team: "T1", creds: { key: SECRET, extra: { pin: "not a number" } } };
    const err = await store
      .repository(vaultRepo)
      // biome-ignore lint/suspicious/noExplicitAny: deliberately ill-typed input
      .put("T1:bad", bad as any)
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreError);
    expect((err as StoreError).code).toBe("store_invalid");
    expect((err as StoreError).message).toContain("creds.extra.pin");
    expect((err as StoreError).message).not.toContain(SECRET);
    expect(await store.keys("vault:")).toEqual([]);
  });

  it("deleteTeamData removes by key and by field, and nothing else", async () => {
    const store = await memory();
    const byField = defineRepository({
      prefix: "byfield",
      schema: z.object({ team: z.string() }),
      team: { field: "team" },
    });
    const global = defineRepository({
      prefix: "global",
      schema: z.object({ team: z.string() }),
      team: "none",
    });
    const vault = store.repository(vaultRepo);
    await vault.put("T1", { team: "T1", creds: { key: "a" } });
    await vault.put("T1:a", { team: "T1", creds: { key: "a" } });
    await vault.put("T11:a", { team: "T11", creds: { key: "a" } });
    await store.repository(byField).put("x", { team: "T1" });
    await store.repository(byField).put("y", { team: "T11" });
    await store.repository(global).put("z", { team: "T1" });
    expect(await deleteTeamData(store, "T1", [vaultRepo, byField, global])).toBe(3);
    expect(await store.keys("")).toEqual(["byfield:y", "global:z", "vault:T11:a"]);
    await expect(deleteTeamData(store, "T1:x", [vaultRepo])).rejects.toBeInstanceOf(StoreError);
  });
});

describe("timeOrderedId", () => {
  it("sorts in creation order, even when the clock steps back", () => {
    const t = Date.now();
    const ids = [t, t, t + 5, t - 1000, t + 5, t + 6].map((ms) => timeOrderedId(ms));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe("expiresOf", () => {
  it("reads only the record's own expiry", () => {
    expect(expiresOf(serialize({ value: 1, expires: 123 }))).toBe(123);
    expect(expiresOf(serialize({ value: { expires: 5 } }))).toBeUndefined();
    expect(expiresOf(serialize({ value: 'a,"expires":5}' }))).toBeUndefined();
    expect(expiresOf(serialize({ value: [1, { x: 1, expires: 9 }] }))).toBeUndefined();
    expect(expiresOf(serialize({ value: { expires: 5 }, expires: 77 }))).toBe(77);
  });
});
