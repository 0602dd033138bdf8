// Picks the classifier backend from config and wraps it in the recorder. The offline model is the
// default (no key, no network); System One is chosen with CROWS_JEV=systemone and needs a base URL
// and a key, a startup error otherwise rather than a silent fall back.
import type { Config } from "../base/config.ts";
import { ConfigError } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { Classifier } from "./jev.ts";
import { OfflineClassifier } from "./offline/classifier.ts";
import { RecordingClassifier } from "./recorder.ts";
import { SystemOneClassifier, type CallGate } from "./systemone.ts";

export type { Answer, AskRequest, Classifier, Question } from "./jev.ts";
export * from "./questions.ts";
export { OfflineClassifier } from "./offline/classifier.ts";
export { SystemOneClassifier } from "./systemone.ts";
export { RecordingClassifier } from "./recorder.ts";

export function createBackend(config: Config, gate?: CallGate): Classifier {
  if (config.jev === "systemone") {
    if (!config.jevBaseUrl) throw new ConfigError("CROWS_JEV=systemone needs CROWS_JEV_BASE_URL");
    if (!config.jevApiKey) throw new ConfigError("CROWS_JEV=systemone needs CROWS_JEV_API_KEY");
    return new SystemOneClassifier({
      baseUrl: config.jevBaseUrl,
      apiKey: config.jevApiKey,
      model: config.jevModel,
      timeoutMs: config.jevTimeoutMs,
      ...(gate ? { gate } : {}),
    });
  }
  return new OfflineClassifier();
}

export function createClassifier(
  config: Config,
  prisma: PrismaClient,
  onError?: (error: unknown) => void,
  gate?: CallGate,
): Classifier {
  return new RecordingClassifier(
    createBackend(config, gate),
    prisma,
    onError ??
      ((error) =>
        console.error(
          `classifier: could not record answers: ${error instanceof Error ? error.message : String(error)}`,
        )),
  );
}
