// Real providers through the Vercel AI SDK (FLOCK.md section 8). CROWS_MODEL picks one:
// openai:<model>, anthropic:<model>, openai-compatible:<model> (with CROWS_MODEL_BASE_URL).
//
// Each call gets its own timeout and at most one retry, run here rather than by the SDK so the
// retry is quick and a timed-out call is not run a second time. Errors that leave this file carry
// a short message (HTTP status, "timed out", "malformed reply") and no cause: the SDK's errors hold
// the request body, which holds the prompt, and some hold headers; none of that may reach a log.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { APICallError, generateText, NoObjectGeneratedError, Output, type LanguageModel } from "ai";
import { ConfigError, type Config } from "../base/config.ts";
import type { Model, ModelReply, ModelRequest, Role } from "./model.ts";
import { estimateTokens } from "./offline.ts";

type Env = Record<string, string | undefined>;

export const PROVIDER_KINDS = ["openai", "anthropic", "openai-compatible"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** Statuses worth one more try: rate limits and server trouble; a 4xx like 401 will not heal. */
function isRetryableStatus(status: number | undefined): boolean {
  return status === undefined || status === 408 || status === 409 || status === 429 || status >= 500;
}

/** Roles whose whole reply is a JSON object, so the provider's JSON mode can be switched on. */
const PURE_JSON_ROLES: ReadonlySet<Role> = new Set(["sentry"]);

export interface ProviderModelOptions {
  timeoutMs: number;
  /** Pause before the single retry. */
  retryDelayMs?: number;
  /** Whether the provider has a schema-free JSON mode (Anthropic has none and would only warn). */
  jsonMode?: boolean;
}

/** A failed call, with a message safe to show and store. */
export class ModelCallError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = "ModelCallError";
  }
}

export class ProviderModel implements Model {
  private readonly retryDelayMs: number;

  constructor(
    readonly name: string,
    private readonly languageModel: LanguageModel,
    private readonly options: ProviderModelOptions,
  ) {
    this.retryDelayMs = options.retryDelayMs ?? 250;
  }

  async generate(request: ModelRequest): Promise<ModelReply> {
    try {
      return await this.attempt(request);
    } catch (error) {
      if (!(error instanceof ModelCallError) || !error.retryable || request.signal?.aborted) throw error;
      await delay(this.retryDelayMs, request.signal);
      return await this.attempt(request);
    }
  }

  private async attempt(request: ModelRequest): Promise<ModelReply> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    // The Sentry's triage is a bare JSON object, so JSON mode fits it; Boss's orders start with a
    // keyword (SPIN {...}), which JSON mode would forbid, so Boss relies on its prompt alone.
    const jsonMode = this.options.jsonMode !== false && request.json === true && PURE_JSON_ROLES.has(request.role);
    try {
      const result = await generateText({
        model: this.languageModel,
        system: request.system,
        prompt: request.prompt,
        maxRetries: 0,
        abortSignal: signal,
        ...(jsonMode ? { output: Output.json() } : {}),
      });
      return this.reply(result.text, result.usage, request);
    } catch (error) {
      // JSON mode that came back as not-JSON is still a reply: the pipeline validates and falls back.
      if (NoObjectGeneratedError.isInstance(error) && typeof error.text === "string") {
        return this.reply(error.text, error.usage, request);
      }
      throw safeError(error, { timedOut: timeout.aborted, aborted: request.signal?.aborted === true, timeoutMs: this.options.timeoutMs });
    }
  }

  private reply(text: string, usage: { inputTokens?: number | undefined; outputTokens?: number | undefined } | undefined, request: ModelRequest): ModelReply {
    if (text.trim().length === 0) throw new ModelCallError("model provider sent a malformed reply (empty text)", false);
    // Token counts come from the provider; a provider that omits them is estimated like offline.
    return {
      text,
      usage: {
        inputTokens: usage?.inputTokens ?? estimateTokens(request.system + request.prompt),
        outputTokens: usage?.outputTokens ?? estimateTokens(text),
      },
      model: this.name,
    };
  }
}

function safeError(error: unknown, state: { timedOut: boolean; aborted: boolean; timeoutMs: number }): ModelCallError {
  if (state.aborted) return new ModelCallError("model call aborted", false);
  if (state.timedOut) return new ModelCallError(`model call timed out after ${state.timeoutMs} ms`, false);
  if (APICallError.isInstance(error)) {
    const status = error.statusCode;
    if (status !== undefined && status >= 200 && status < 300) return new ModelCallError("model provider sent a malformed reply", false);
    if (status === undefined) return new ModelCallError("model provider unreachable", true);
    return new ModelCallError(`model provider answered HTTP ${status}`, isRetryableStatus(status));
  }
  const name = error instanceof Error ? error.name : "";
  if (/TypeValidation|JSONParse|InvalidResponseData|EmptyResponseBody|NoContentGenerated|NoOutputGenerated/.test(name)) {
    return new ModelCallError("model provider sent a malformed reply", false);
  }
  if (error instanceof TypeError) return new ModelCallError("model provider unreachable", true);
  return new ModelCallError("model call failed", false);
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(new ModelCallError("model call aborted", false));
      },
      { once: true },
    );
  });
}

/** Splits CROWS_MODEL ("openai:gpt-4o-mini") into a provider kind and a model id. */
export function parseModelSetting(setting: string): { kind: ProviderKind; modelId: string } {
  const colon = setting.indexOf(":");
  const kind = colon > 0 ? setting.slice(0, colon) : "";
  const modelId = colon > 0 ? setting.slice(colon + 1).trim() : "";
  if (!(PROVIDER_KINDS as readonly string[]).includes(kind) || modelId === "") {
    throw new ConfigError(
      `CROWS_MODEL must be "offline", "openai:<model>", "anthropic:<model>" or "openai-compatible:<model>", got ${JSON.stringify(setting)}`,
    );
  }
  return { kind: kind as ProviderKind, modelId };
}

/** Builds the configured provider, refusing at startup (ConfigError naming the variable) what cannot work. */
export function createProviderModel(config: Config, env: Env = process.env, options: Partial<ProviderModelOptions> = {}): ProviderModel {
  const { kind, modelId } = parseModelSetting(config.model);
  const modelOptions: ProviderModelOptions = { timeoutMs: config.modelTimeoutMs, ...options };
  const baseURL = config.modelBaseUrl;
  switch (kind) {
    case "openai": {
      const apiKey = config.modelApiKey ?? nonEmpty(env.OPENAI_API_KEY);
      if (!apiKey) throw new ConfigError(`CROWS_MODEL ${config.model} needs a key in CROWS_MODEL_API_KEY or OPENAI_API_KEY`);
      const provider = createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) });
      // Chat completions rather than the Responses API: it is what proxies and look-alikes speak.
      return new ProviderModel(config.model, provider.chat(modelId), modelOptions);
    }
    case "anthropic": {
      const apiKey = config.modelApiKey ?? nonEmpty(env.ANTHROPIC_API_KEY);
      if (!apiKey) throw new ConfigError(`CROWS_MODEL ${config.model} needs a key in CROWS_MODEL_API_KEY or ANTHROPIC_API_KEY`);
      const provider = createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) });
      return new ProviderModel(config.model, provider(modelId), { jsonMode: false, ...modelOptions });
    }
    case "openai-compatible": {
      if (!baseURL) throw new ConfigError(`CROWS_MODEL ${config.model} needs CROWS_MODEL_BASE_URL (for example http://127.0.0.1:11434/v1)`);
      // Local servers (Ollama, llama.cpp, vLLM) often need no key, so none is required here.
      const provider = createOpenAICompatible({
        name: "openai-compatible",
        baseURL,
        includeUsage: true,
        ...(config.modelApiKey ? { apiKey: config.modelApiKey } : {}),
      });
      return new ProviderModel(config.model, provider.chatModel(modelId), modelOptions);
    }
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
