import { existsSync } from "node:fs";
import { type Config, ConfigError, loadConfig } from "./config.ts";

/**
 * What every command line entry (`npm start`, `npm run rekey`) does first: read a `.env` file in
 * the working directory, as Slack's starter apps do (values already in the environment win),
 * and check the configuration, stopping with one line naming the bad variable.
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
    if (err instanceof ConfigError) fail(`configuration error: ${err.message}`);
    throw err;
  }
}
