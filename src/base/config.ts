// Configuration from the environment (docs/flock.md §11). Every setting is declared once in
// src/base/settings/ (its variable, kind, default, bounds, who sets it, whether it is a secret);
// this is what the rest of the code reads. Every variable has a default that serves on a fresh
// machine; a bad value is a startup error of one line that names the variable.
import type { Config } from "./settings/index.ts";
import { readSettings } from "./settings/load.ts";

export type { Config, WebhookConfig } from "./settings/index.ts";
export { ConfigError } from "./settings/declare.ts";
export { isLoopbackHost, readOne, readSettings, type Loaded, type Read } from "./settings/load.ts";
export { SERVER } from "./settings/server.ts";
export { STORAGE } from "./settings/storage.ts";

type Env = Record<string, string | undefined>;

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  return readSettings(env, overrides).config;
}
