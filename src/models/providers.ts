// Real providers through the Vercel AI SDK (docs/flock.md §8). CROWS_MODEL picks one:
// openai:<model>, anthropic:<model>, openai-compatible:<model> (with CROWS_MODEL_BASE_URL).
//
// A call goes out through the provider's gate (src/models/provider-pacer.ts: the concurrency cap, the fair
// queue, the circuit) and under the one retry policy (src/models/retry-policy.ts); the SDK's own
// retries are off. What a failure means is decided in src/models/provider-errors.ts. Plain-text
// roles stream (streamText) when the flight listens; the Sentry asks for its JSON schema
// (structured-output.ts). Errors that leave this file carry a short message and no cause: the
// SDK's errors hold the request body, which holds the prompt, and some hold headers.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import {
  generateText,
  jsonSchema,
  NoObjectGeneratedError,
  Output,
  streamText,
  tool,
  type LanguageModel,
  type ModelMessage,
  type ToolSet,
} from "ai";
import { ConfigError, type Config } from "../base/config.ts";
import type { Model, ModelReply, ModelRequest, Role, ToolCallRequest, ToolTurn } from "./model.ts";
import { estimateTokens } from "./offline.ts";
import { classifyProviderError, ModelCallError, rateLimitsFrom, type RateLimits } from "./provider-errors.ts";
import { retryPolicyFrom, withRetries, type RetryPolicy } from "./retry-policy.ts";
import { ProviderPacer } from "./provider-pacer.ts";
import { StructuredTriage } from "./structured-output.ts";

export { ModelCallError } from "./provider-errors.ts";

type Env = Record<string, string | undefined>;

// The SDK's warnings go to the console and may quote settings; what matters is said in our log.
(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

export const PROVIDER_KINDS = ["openai", "anthropic", "openai-compatible"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** Roles whose whole reply is a JSON object, so the provider's JSON mode can be switched on. */
const PURE_JSON_ROLES: ReadonlySet<Role> = new Set(["sentry"]);
/** Roles whose plain-text answer the owner may watch as it streams. */
const STREAMED_ROLES: ReadonlySet<Role> = new Set(["crow", "elder"]);

export interface ProviderModelOptions {
  timeoutMs: number;
  /** Whether the provider has a schema-free JSON mode (Anthropic has none and would only warn). */
  jsonMode?: boolean;
  /** Whether to ask the Sentry for its JSON schema (structured output) before JSON mode. */
  structuredOutput?: boolean;
  policy: RetryPolicy;
  gate: ProviderPacer;
  /** Where the model says what it decided once (a provider that refused a schema); never a prompt. */
  logLine?: (line: string) => void;
}

type SdkUsage = { inputTokens?: number | undefined; outputTokens?: number | undefined } | undefined;

export class ProviderModel implements Model {
  private readonly structured: StructuredTriage;

  constructor(
    readonly name: string,
    private readonly languageModel: LanguageModel,
    private readonly options: ProviderModelOptions,
  ) {
    this.structured = new StructuredTriage(name, options.structuredOutput !== false, options.logLine);
  }

  get gate(): ProviderPacer {
    return this.options.gate;
  }

  /** One flight's call: through the gate, retried under the policy while the provider's weather lasts. */
  generate(request: ModelRequest): Promise<ModelReply> {
    const { policy, gate } = this.options;
    const watch = request.watch;
    let waited = false;
    return withRetries(
      policy,
      {
        deadline: (now) => watch?.deadline(now, policy.patienceMs) ?? Promise.resolve(now + policy.patienceMs),
        waiting: (notice) => {
          waited = true;
          watch?.waiting?.(notice);
        },
        ...(request.signal ? { signal: request.signal } : {}),
      },
      async (_n, timeoutFactor, deadline) => {
        const ticket = await gate.acquire(request.lane ?? "other", {
          ...(request.signal ? { signal: request.signal } : {}),
          patience: (now) => watch?.deadline(now, policy.patienceMs) ?? Promise.resolve(now + policy.patienceMs),
          waiting: (notice) => {
            waited = true;
            watch?.waiting?.(notice);
          },
        });
        if (waited) {
          waited = false;
          watch?.resumed?.();
        }
        try {
          // A grown timeout never runs a try past the patience (but never below the configured one).
          const grown = this.options.timeoutMs * timeoutFactor;
          const timeoutMs = Math.round(
            deadline === undefined ? grown : Math.min(grown, Math.max(this.options.timeoutMs, deadline - Date.now())),
          );
          const { reply, limits } = await this.attempt(request, timeoutMs);
          ticket.release({ outcome: "ok", ...(limits ? { limits } : {}) });
          return reply;
        } catch (error) {
          const failure = error instanceof ModelCallError ? error : new ModelCallError("model call failed", "answer");
          ticket.release({
            outcome: failure.kind,
            ...(failure.status ? { status: failure.status } : {}),
            ...(failure.retryAfterMs !== undefined ? { retryAfterMs: failure.retryAfterMs } : {}),
            ...(failure.limits ? { limits: failure.limits } : {}),
          });
          throw failure;
        }
      },
    );
  }

  /** One try against the provider, with its own timeout; throws a classified ModelCallError. */
  async attempt(request: ModelRequest, timeoutMs: number): Promise<{ reply: ModelReply; limits?: RateLimits }> {
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = request.signal ? AbortSignal.any([request.signal, timeout]) : timeout;
    // The Sentry's triage is a bare JSON object, so a schema or JSON mode fits it; Boss's orders
    // start with a keyword (SPIN {...}), which JSON mode would forbid, so Boss relies on its prompt.
    const wantsJson = request.json === true && PURE_JSON_ROLES.has(request.role);
    const jsonMode = this.options.jsonMode !== false && wantsJson;
    try {
      if (wantsJson && this.structured.enabled) {
        const asked = await this.structured.ask(
          (output) => generateText({ ...this.base(request, signal), output }),
          jsonMode,
        );
        if (asked) return this.reply(asked.text, asked.usage, request, asked.headers);
      }
      if (request.tools) return await this.toolStep(request, request.tools, signal);
      if (STREAMED_ROLES.has(request.role) && request.watch?.text) return await this.stream(request, signal);
      const result = await generateText({
        ...this.base(request, signal),
        ...(jsonMode ? { output: Output.json() } : {}),
      });
      return this.reply(result.text, result.usage, request, result.response.headers);
    } catch (error) {
      if (error instanceof ModelCallError) throw error;
      // JSON mode that came back as not-JSON is still a reply: the pipeline validates and falls back.
      if (NoObjectGeneratedError.isInstance(error) && typeof error.text === "string") {
        return this.reply(error.text, error.usage, request, error.response?.headers);
      }
      throw classifyProviderError(error, {
        timedOut: timeout.aborted,
        aborted: request.signal?.aborted === true,
        timeoutMs,
      });
    }
  }

  private base(request: ModelRequest, signal: AbortSignal) {
    return {
      model: this.languageModel,
      system: request.system,
      prompt: request.prompt,
      maxRetries: 0,
      abortSignal: signal,
    };
  }

  /** Streams a plain-text answer to the flight as it comes; the reply is the whole text, as before. */
  private async stream(
    request: ModelRequest,
    signal: AbortSignal,
  ): Promise<{ reply: ModelReply; limits?: RateLimits }> {
    const result = streamText({ ...this.base(request, signal), onError: () => {} });
    let text = "";
    let usage: SdkUsage;
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        if (part.text) request.watch?.text?.(part.text, text === "");
        text += part.text;
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "finish") {
        usage = part.totalUsage;
      } else if (part.type === "abort") {
        throw new Error("aborted");
      }
    }
    return this.reply(text, usage, request, (await result.response).headers);
  }

  /**
   * One step of a flight with tools (docs/tools.md): the model is offered the tools with no
   * `execute`, so the SDK hands their calls back instead of running them; the flock runs them
   * (approval first where asked, at most once) and sends their results on the next step.
   */
  private async toolStep(
    request: ModelRequest,
    turn: ToolTurn,
    signal: AbortSignal,
  ): Promise<{ reply: ModelReply; limits?: RateLimits }> {
    const tools: ToolSet = {};
    for (const offer of turn.offered) {
      tools[offer.name] = tool({
        description: offer.description,
        inputSchema: jsonSchema(offer.inputSchema as Parameters<typeof jsonSchema>[0]),
      });
    }
    const { prompt: _prompt, ...base } = this.base(request, signal);
    const result = streamText({
      ...base,
      messages: toolMessages(request.prompt, turn),
      ...(turn.offered.length > 0 ? { tools, toolChoice: turn.final ? ("none" as const) : ("auto" as const) } : {}),
      onError: () => {},
    });
    let text = "";
    let usage: SdkUsage;
    const calls: ToolCallRequest[] = [];
    for await (const part of result.fullStream) {
      if (part.type === "text-delta") {
        if (part.text) request.watch?.text?.(part.text, text === "");
        text += part.text;
      } else if (part.type === "tool-call") {
        const args =
          part.input !== null && typeof part.input === "object" ? (part.input as Record<string, unknown>) : {};
        calls.push({ id: part.toolCallId, name: part.toolName, args });
      } else if (part.type === "error") {
        throw part.error;
      } else if (part.type === "finish") {
        usage = part.totalUsage;
      } else if (part.type === "abort") {
        throw new Error("aborted");
      }
    }
    return this.reply(text, usage, request, (await result.response).headers, calls);
  }

  private reply(
    text: string,
    usage: SdkUsage,
    request: ModelRequest,
    headers?: Record<string, string>,
    toolCalls: ToolCallRequest[] = [],
  ): { reply: ModelReply; limits?: RateLimits } {
    if (text.trim().length === 0 && toolCalls.length === 0)
      throw new ModelCallError("model provider sent a malformed reply (empty text)", "answer");
    const limits = rateLimitsFrom(headers);
    // Token counts come from the provider; a provider that omits them is estimated like offline.
    const reply: ModelReply = {
      text,
      usage: {
        inputTokens: usage?.inputTokens ?? estimateTokens(request.system + request.prompt),
        outputTokens: usage?.outputTokens ?? estimateTokens(text),
      },
      model: this.name,
      ...(toolCalls.length > 0 ? { toolCalls } : {}),
    };
    return limits ? { reply, limits } : { reply };
  }
}

/** The conversation of a flight with tools: the task, then each step's calls and what they returned. */
function toolMessages(prompt: string, turn: ToolTurn): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: "user", content: prompt }];
  for (const step of turn.steps) {
    messages.push({
      role: "assistant",
      content: [
        ...(step.text ? [{ type: "text" as const, text: step.text }] : []),
        ...step.calls.map((call) => ({
          type: "tool-call" as const,
          toolCallId: call.id,
          toolName: call.name,
          input: call.args,
        })),
      ],
    });
    messages.push({
      role: "tool",
      content: step.calls.map((call) => ({
        type: "tool-result" as const,
        toolCallId: call.id,
        toolName: call.name,
        output: { type: "text" as const, value: call.result },
      })),
    });
  }
  return messages;
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
export function createProviderModel(
  config: Config,
  env: Env = process.env,
  options: Partial<ProviderModelOptions> = {},
): ProviderModel {
  const { kind, modelId } = parseModelSetting(config.model);
  const policy = options.policy ?? retryPolicyFrom(config);
  const modelOptions: ProviderModelOptions = {
    timeoutMs: config.modelTimeoutMs,
    policy,
    gate: options.gate ?? providerPacer(config, policy),
    ...options,
  };
  const baseURL = config.modelBaseUrl;
  switch (kind) {
    case "openai": {
      const apiKey = config.modelApiKey ?? config.openaiApiKey ?? nonEmpty(env.OPENAI_API_KEY);
      if (!apiKey)
        throw new ConfigError(`CROWS_MODEL ${config.model} needs a key in CROWS_MODEL_API_KEY or OPENAI_API_KEY`);
      const provider = createOpenAI({ apiKey, ...(baseURL ? { baseURL } : {}) });
      // Chat completions rather than the Responses API: it is what proxies and look-alikes speak.
      return new ProviderModel(config.model, provider.chat(modelId), modelOptions);
    }
    case "anthropic": {
      const apiKey = config.modelApiKey ?? config.anthropicApiKey ?? nonEmpty(env.ANTHROPIC_API_KEY);
      if (!apiKey)
        throw new ConfigError(`CROWS_MODEL ${config.model} needs a key in CROWS_MODEL_API_KEY or ANTHROPIC_API_KEY`);
      const provider = createAnthropic({ apiKey, ...(baseURL ? { baseURL } : {}) });
      return new ProviderModel(config.model, provider(modelId), { jsonMode: false, ...modelOptions });
    }
    case "openai-compatible": {
      if (!baseURL)
        throw new ConfigError(
          `CROWS_MODEL ${config.model} needs CROWS_MODEL_BASE_URL (for example http://127.0.0.1:11434/v1)`,
        );
      // Local servers (Ollama, llama.cpp, vLLM) often need no key, so none is required here.
      const provider = createOpenAICompatible({
        name: "openai-compatible",
        baseURL,
        includeUsage: true,
        // Ask for the Sentry's JSON schema; a server without it refuses once and gets JSON mode.
        supportsStructuredOutputs: true,
        ...(config.modelApiKey ? { apiKey: config.modelApiKey } : {}),
      });
      return new ProviderModel(config.model, provider.chatModel(modelId), modelOptions);
    }
  }
}

/** The gate of the configured provider: one per process, shared by every call to it. */
export function providerPacer(config: Config, policy: RetryPolicy = retryPolicyFrom(config)): ProviderPacer {
  return new ProviderPacer(config.model, {
    concurrency: config.modelConcurrency,
    circuitFailures: config.modelCircuitFailures,
    policy,
  });
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed ? trimmed : undefined;
}
