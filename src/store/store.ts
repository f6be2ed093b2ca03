import type { z } from "zod";
import type { KeyValueStore } from "./kv.ts";
import type { Repositories } from "./repositories.ts";
import type { Repository, RepositoryDefinition } from "./repository.ts";

/**
 * The store: raw key-value operations, the typed repositories of the records in records.ts (README: The store), and
 * `deleteTeam` for uninstall.
 */
export interface Store extends KeyValueStore, Repositories {
  /** Binds a feature's own repository (see defineRepository) to this store. */
  repository<S extends z.ZodType>(def: RepositoryDefinition<S>): Repository<z.output<S>>;
  /**
   * Removes every key of the team (or enterprise) in every repository the store serves: install,
   * settings, users, tokens, events, audit, its subscriptions and outbox items, and the features'
   * own repositories it was opened with. Returns the number of keys removed.
   */
  deleteTeam(teamId: string): Promise<number>;
}
