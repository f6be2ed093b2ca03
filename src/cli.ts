import { existsSync } from "node:fs";
import { type Config, ConfigError, loadConfig } from "./config.ts";

/**
 * What every command line entry (`npm start`, `npm run rekey`) does first: read a `.env` file in
 * the working directory, as Slack's starter apps do (values already in the environment win),
 * and check the configuration, stopping with one line per bad variable, all of them at once.
 */
export function startCommand(name: string): { config: Config; fail(message: string): never } {
  const fail = (message: string): never => {
    process.stderr.write(`${name}: ${message}\n`);
    process.exit(1);
  };
  if (existsSync(".env")) process.loadEnvFile(".env");
  try {
    return { config: loadConfig(), fail };
  } catch (err) {
    if (err instanceof ConfigError) {
      // Every bad variable at once, one line each: fixed in one go, not one per restart.
      for (const p of err.problems) {
        process.stderr.write(`${name}: configuration error: ${p.message}\n`);
      }
      process.exit(1);
    }
    throw err;
  }
}
