// Real providers through the Vercel AI SDK. Placeholder until the SDK wiring lands: any
// non-offline CROWS_MODEL is refused at startup with a message naming the variable.
import { ConfigError, type Config } from "../config.ts";
import type { Model } from "./model.ts";

export function createProviderModel(config: Config): Model {
  throw new ConfigError(`CROWS_MODEL ${JSON.stringify(config.model)} is not supported yet; use "offline"`);
}
