// The model provider (docs/models.md) and the System One classifier (docs/classifier.md): which,
// where, the key, and how calls are paced through their gates.
import { setting } from "./declare.ts";
import { between, ms, oneOf, text, whole } from "./kinds.ts";

export const MODELS = {
  model: setting<string>({
    env: "CROWS_MODEL",
    group: "models",
    kind: text,
    audience: "owner",
    default: "offline",
    describe: "`offline`, `openai:<model>`, `anthropic:<model>`, `openai-compatible:<model>` (docs/models.md)",
  }),
  modelBaseUrl: setting<string | undefined>({
    env: "CROWS_MODEL_BASE_URL",
    group: "models",
    kind: text,
    audience: "owner",
    default: undefined,
    describe: "the endpoint for `openai-compatible` (vLLM, llama.cpp server, Ollama) or a proxy",
  }),
  modelApiKey: setting<string | undefined>({
    env: "CROWS_MODEL_API_KEY",
    group: "models",
    kind: text,
    audience: "owner",
    secret: "whole",
    default: undefined,
    describe: "the provider's key; else OPENAI_API_KEY / ANTHROPIC_API_KEY",
  }),
  openaiApiKey: setting<string | undefined>({
    env: "OPENAI_API_KEY",
    group: "models",
    kind: text,
    audience: "owner",
    secret: "whole",
    default: undefined,
    describe: "the key for `openai:<model>` when CROWS_MODEL_API_KEY is unset",
  }),
  anthropicApiKey: setting<string | undefined>({
    env: "ANTHROPIC_API_KEY",
    group: "models",
    kind: text,
    audience: "owner",
    secret: "whole",
    default: undefined,
    describe: "the key for `anthropic:<model>` when CROWS_MODEL_API_KEY is unset",
  }),
  modelTimeoutMs: setting<number>({
    env: "CROWS_MODEL_TIMEOUT_MS",
    group: "models",
    kind: ms(10),
    audience: "tuning",
    default: 60_000,
    describe:
      'per try of a model call; a timed-out try is asked again after a backoff with twice the time, within the patience (docs/models.md "Provider weather")',
  }),
  modelPatienceMs: setting<number>({
    env: "CROWS_MODEL_PATIENCE_MS",
    group: "models",
    kind: ms(0),
    audience: "tuning",
    default: (known) => Number(known.approvalWindowMs),
    defaultText: "CROWS_APPROVAL_WINDOW_MS",
    describe:
      "how long a flight keeps trying a provider that is rate-limiting, down or slow, from its item's first wait; stored, so a restart keeps it; after it the item fails with `model provider unavailable for <s> s` (0: fail on the first trouble)",
  }),
  modelConcurrency: setting<number>({
    env: "CROWS_MODEL_CONCURRENCY",
    group: "models",
    kind: whole(1, 256),
    audience: "tuning",
    default: 4,
    describe:
      "model calls in the air at once, per process (the provider gate's cap). Hosted providers: 4 or what your tier allows. Local servers: 1 (llama.cpp server, Ollama by default), 2 with `OLLAMA_NUM_PARALLEL=2`. With several instances the provider sees instances × this",
  }),
  modelBackoffMs: setting<number>({
    env: "CROWS_MODEL_BACKOFF_MS",
    group: "models",
    kind: ms(1),
    audience: "tuning",
    default: 500,
    describe:
      "the first backoff after provider trouble when the provider names no wait; it doubles with each failure, full jitter",
  }),
  modelBackoffMaxMs: setting<number>({
    env: "CROWS_MODEL_BACKOFF_MAX_MS",
    group: "models",
    kind: ms(1),
    audience: "tuning",
    default: 60_000,
    describe:
      "the cap on a computed backoff and on the circuit's cooldown (the provider's own Retry-After may be longer, within the patience)",
  }),
  modelCircuitFailures: setting<number>({
    env: "CROWS_MODEL_CIRCUIT_FAILURES",
    group: "models",
    kind: whole(1, 1000),
    audience: "tuning",
    default: 5,
    describe:
      "provider failures (weather or timeouts) in a row that open the gate's circuit: calls then wait and one trial call probes the provider; System One's gate uses it too",
  }),
};

export const CLASSIFIER = {
  jev: setting<"offline" | "systemone">({
    env: "CROWS_JEV",
    group: "classifier",
    kind: oneOf(["offline", "systemone"], true),
    audience: "owner",
    default: "offline",
    describe: "`offline` or `systemone` (docs/classifier.md)",
  }),
  jevBaseUrl: setting<string | undefined>({
    env: "CROWS_JEV_BASE_URL",
    group: "classifier",
    kind: text,
    audience: "owner",
    default: undefined,
    describe: "the System One endpoint (needed with `CROWS_JEV=systemone`)",
  }),
  jevApiKey: setting<string | undefined>({
    env: "CROWS_JEV_API_KEY",
    group: "classifier",
    kind: text,
    audience: "owner",
    secret: "whole",
    default: undefined,
    describe: "the System One key (needed with `CROWS_JEV=systemone`)",
  }),
  jevModel: setting<string>({
    env: "CROWS_JEV_MODEL",
    group: "classifier",
    kind: text,
    audience: "tuning",
    default: "jev-1",
    describe: "the pinned System One model (never `jev-latest` by default: it moves)",
  }),
  jevTimeoutMs: setting<number>({
    env: "CROWS_JEV_TIMEOUT_MS",
    group: "classifier",
    kind: ms(10),
    audience: "tuning",
    default: 5_000,
    describe: 'per classifier call; a timeout answers "unsure"',
  }),
  jevConcurrency: setting<number>({
    env: "CROWS_JEV_CONCURRENCY",
    group: "classifier",
    kind: whole(1, 256),
    audience: "tuning",
    default: 4,
    describe:
      'System One calls in the air at once, per process (its own gate, apart from the model\'s); while its circuit is open the answers are "unsure" at once',
  }),
  jevThreshold: setting<number>({
    env: "CROWS_JEV_THRESHOLD",
    group: "classifier",
    kind: between(0.5, 1),
    audience: "tuning",
    default: 0.8,
    describe: "the classifier's band",
  }),
};
