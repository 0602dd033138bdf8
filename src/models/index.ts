// Picks the model backend from configuration (CROWS_MODEL): the offline brain by default, a real
// provider through the AI SDK otherwise (src/models/providers.ts).
import type { Config } from "../base/config.ts";
import type { Model } from "./model.ts";
import { OfflineBrain } from "./offline.ts";
import { createProviderModel } from "./providers.ts";

/** Throws ConfigError (naming the variable) for a setting that cannot work, at startup. */
export function createModel(
  config: Config,
  env: Record<string, string | undefined> = process.env,
  options: { logLine?: (line: string) => void } = {},
): Model {
  if (config.model === "offline") return new OfflineBrain();
  return createProviderModel(config, env, options.logLine ? { logLine: options.logLine } : {});
}

export type { Model, ModelReply, ModelRequest, Role, RoleInput, Usage } from "./model.ts";
export { renderRequest } from "./prompts.ts";
export { OfflineBrain } from "./offline.ts";
export { ProviderPacer, type ProviderPacerStats, type CircuitState, type CallOutcome } from "./provider-pacer.ts";
export { ProviderModel, providerPacer } from "./providers.ts";
export { parseBoss, parseQuill, parseTriage, type BossReply, type QuillReply, type TriageReply } from "./formats.ts";
