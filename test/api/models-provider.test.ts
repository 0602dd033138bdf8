// The provider path against a real HTTP server on loopback (OpenAI chat-completions shape).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ConfigError, loadConfig } from "../../src/base/config.ts";
import { parseTriage } from "../../src/models/formats.ts";
import { createModel } from "../../src/models/index.ts";
import type { Model, ModelRequest } from "../../src/models/model.ts";
import { OfflineBrain } from "../../src/models/offline.ts";
import { renderRequest } from "../../src/models/prompts.ts";
import { createProviderModel } from "../../src/models/providers.ts";
import { defaultScript, startFakeOpenAI, type FakeOpenAI, type FakeScript } from "../helpers/fake-openai.ts";

const SECRET_KEY = "sk-test-do-not-leak-4242";
const ITEM = "Research flights to Lisbon and book the cheapest one";

function sentryRequest(item = ITEM): ModelRequest {
  return renderRequest({ role: "sentry", input: { item }, speaker: "Sentry", persona: "Sentry" });
}

function crowRequest(): ModelRequest {
  return renderRequest({
    role: "crow",
    input: { task: "Draft the launch email", taskType: "writing" },
    speaker: "Pepper",
    persona: "Pepper",
  });
}

async function withFake(
  script: FakeScript,
  run: (fake: FakeOpenAI, model: Model, lines: string[]) => Promise<void>,
  timeoutMs = 2_000,
  kind = "openai-compatible",
  env: Record<string, string> = {},
): Promise<void> {
  const fake = await startFakeOpenAI(script);
  try {
    const config = loadConfig({
      CROWS_MODEL: `${kind}:tiny-1`,
      CROWS_MODEL_BASE_URL: fake.url,
      CROWS_MODEL_API_KEY: SECRET_KEY,
      CROWS_MODEL_TIMEOUT_MS: String(timeoutMs),
      CROWS_MODEL_BACKOFF_MS: "10",
      CROWS_MODEL_PATIENCE_MS: "400",
      ...env,
    });
    const lines: string[] = [];
    const model = createProviderModel(config, {}, { logLine: (line) => lines.push(line) });
    await run(fake, model, lines);
  } finally {
    await fake.close();
  }
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    assert.instance(error, Error);
    return error as Error;
  }
  throw new Error("expected the call to fail");
}

function assertSafe(message: string): void {
  assert.not.ok(message.includes(SECRET_KEY), "the key must not appear in an error");
  assert.not.ok(message.includes("Lisbon"), "the prompt must not appear in an error");
  assert.not.ok(message.includes("Draft the launch"), "the prompt must not appear in an error");
}

test("a normal reply comes back with the provider's token counts and the rendered prompts were sent", async () => {
  await withFake(
    () => ({ content: "Subject: It's here.", usage: { prompt_tokens: 123, completion_tokens: 7 } }),
    async (fake, model) => {
      const reply = await model.generate(crowRequest());
      assert.is(reply.text, "Subject: It's here.");
      assert.equal(reply.usage, { inputTokens: 123, outputTokens: 7 });
      assert.is(reply.model, "openai-compatible:tiny-1");
      assert.is(fake.calls.length, 1);
      const call = fake.calls[0]!;
      assert.is(call.path, "/v1/chat/completions");
      assert.is(call.body.model, "tiny-1");
      assert.ok(call.system.startsWith("You are Pepper"));
      assert.ok(call.prompt.includes("Draft the launch email"));
      assert.is(call.headers.authorization, `Bearer ${SECRET_KEY}`);
      assert.is(call.body.response_format, undefined, "a crow's plain answer does not ask for JSON mode");
    },
  );
});

test("the openai provider speaks chat completions to a base URL too", async () => {
  await withFake(
    () => ({ content: "done", usage: { prompt_tokens: 5, completion_tokens: 1 } }),
    async (fake, model) => {
      const reply = await model.generate(crowRequest());
      assert.is(reply.text, "done");
      assert.is(reply.model, "openai:tiny-1");
      assert.is(fake.calls[0]!.path, "/v1/chat/completions");
    },
    2_000,
    "openai",
  );
});

test("the Sentry asks for its JSON schema (structured output) and a valid triage parses", async () => {
  const triages = [
    {
      mode: "split",
      task_type: "research",
      subtasks: ["Research flights", "Book the cheapest"],
      reason: "two actions",
    },
    { mode: "solo", task_type: "errand", subtasks: [], reason: "one errand" },
    { mode: "murder", task_type: "writing", subtasks: [], reason: "several takes" },
  ];
  for (const triage of triages) {
    await withFake(
      () => ({ content: JSON.stringify(triage), usage: { prompt_tokens: 90, completion_tokens: 30 } }),
      async (fake, model, lines) => {
        const reply = await model.generate(sentryRequest());
        const format = fake.calls[0]!.body.response_format;
        assert.is(format.type, "json_schema");
        assert.equal(Object.keys(format.json_schema.schema.properties).sort(), [
          "mode",
          "reason",
          "subtasks",
          "task_type",
        ]);
        assert.equal(format.json_schema.schema.properties.mode.enum, ["solo", "split", "murder"]);
        const parsed = parseTriage(reply.text);
        assert.ok(parsed.ok);
        if (parsed.ok) assert.equal(parsed.value, triage);
        assert.equal(lines, [], "nothing to say when the schema was taken");
      },
    );
  }
});

test("a provider that refuses the schema is asked in JSON mode from then on, and the log says so once", async () => {
  for (const refusal of [400, 422]) {
    await withFake(
      (call) =>
        call.body.response_format?.type === "json_schema"
          ? { status: refusal }
          : {
              content: JSON.stringify({ mode: "solo", task_type: "other", subtasks: [], reason: "plain JSON" }),
              usage: { prompt_tokens: 9, completion_tokens: 9 },
            },
      async (fake, model, lines) => {
        for (const item of [ITEM, "Buy milk", "Write a haiku"]) {
          const parsed = parseTriage((await model.generate(sentryRequest(item))).text);
          assert.ok(parsed.ok, item);
        }
        assert.equal(
          fake.calls.map((c) => c.body.response_format?.type),
          ["json_schema", "json_object", "json_object", "json_object"],
          "one refusal, then JSON mode for every later triage",
        );
        assert.is(lines.length, 1);
        assert.match(lines[0]!, /refused a JSON schema.*JSON mode/);
        assertSafe(lines[0]!);
      },
    );
  }
});

test("a provider that omits usage is estimated from text length", async () => {
  await withFake(
    () => ({ content: "twelve chars", usage: null }),
    async (_fake, model) => {
      const request = crowRequest();
      const reply = await model.generate(request);
      assert.is(reply.usage.outputTokens, 3);
      assert.is(reply.usage.inputTokens, Math.ceil((request.system + request.prompt).length / 4));
    },
  );
});

test("a timed-out call is not repeated as it was: the next try waits, then gets twice the time", async () => {
  // The timeout and the delays sit far apart (1 s; 1.25-1.5 s; 2 s), so a loaded machine's late
  // timers cannot make the second try time out too.
  for (const delayMs of [1_250, 1_500]) {
    await withFake(
      () => ({ content: "slow but sure", usage: { prompt_tokens: 1, completion_tokens: 1 }, delayMs }),
      async (fake, model) => {
        const reply = await model.generate(crowRequest());
        assert.is(reply.text, "slow but sure");
        assert.is(fake.calls.length, 2, "the first try timed out at 1 s, the second had 2 s");
      },
      1_000,
      "openai-compatible",
      { CROWS_MODEL_PATIENCE_MS: "5000" },
    );
  }
});

test("a provider that keeps answering 5xx is retried until the patience, then fails as unavailable", async () => {
  for (const status of [500, 502, 503, 529]) {
    await withFake(
      () => ({ status }),
      async (fake, model) => {
        const started = Date.now();
        const error = await rejection(model.generate(sentryRequest()));
        assert.ok(Date.now() - started >= 400, "it kept trying for the patience");
        assert.ok(fake.calls.length >= 3, `several tries, got ${fake.calls.length}`);
        assert.match(error.message, new RegExp(`model provider unavailable for \\d+ s \\(.*${status}`));
        assertSafe(error.message);
        assert.is(
          (error as Error & { cause?: unknown }).cause,
          undefined,
          "no SDK error (with the request body) rides along",
        );
      },
      2_000,
      "openai-compatible",
      { CROWS_MODEL_CIRCUIT_FAILURES: "100" },
    );
  }
});

test("a 500 followed by a good reply succeeds on the retry", async () => {
  await withFake(
    (_call, index) =>
      index === 0
        ? { status: 503 }
        : { content: "second time lucky", usage: { prompt_tokens: 4, completion_tokens: 3 } },
    async (fake, model) => {
      const reply = await model.generate(crowRequest());
      assert.is(reply.text, "second time lucky");
      assert.is(fake.calls.length, 2);
    },
  );
});

test("a stream cut mid-answer is weather: asked again, its text starts afresh, and only the whole answer's usage counts", async () => {
  for (const cutAfter of [0, 1, 3]) {
    await withFake(
      (_call, index) => ({
        content: "The whole answer, streamed in pieces.",
        usage: { prompt_tokens: 10 + index, completion_tokens: 5 },
        ...(index === 0 ? { resetAfterChunks: cutAfter } : {}),
      }),
      async (fake, model) => {
        const pieces: Array<[string, boolean]> = [];
        const request = {
          ...crowRequest(),
          watch: {
            deadline: async (now: number, patience: number) => now + patience,
            text: (delta: string, first: boolean) => pieces.push([delta, first]),
          },
        };
        const reply = await model.generate(request);
        assert.is(reply.text, "The whole answer, streamed in pieces.");
        assert.equal(reply.usage, { inputTokens: 11, outputTokens: 5 }, "the second try's usage, once");
        assert.is(fake.calls.length, 2);
        const lastStart = pieces.map(([, first]) => first).lastIndexOf(true);
        assert.is(
          pieces
            .slice(lastStart)
            .map(([delta]) => delta)
            .join(""),
          reply.text,
          "the text after the last fresh start is the answer",
        );
      },
    );
  }
});

test("a 400, 401, 403 or 404 is configuration trouble: not retried, and the message names the cause", async () => {
  const causes: Array<[number, RegExp]> = [
    [400, /HTTP 400.*CROWS_MODEL/],
    [401, /HTTP 401.*CROWS_MODEL_API_KEY/],
    [403, /HTTP 403.*CROWS_MODEL_API_KEY/],
    [404, /HTTP 404.*CROWS_MODEL_BASE_URL/],
  ];
  for (const [status, cause] of causes) {
    await withFake(
      () => ({ status }),
      async (fake, model) => {
        const error = await rejection(model.generate(crowRequest()));
        assert.is(fake.calls.length, 1, `${status} is not retried`);
        assert.match(error.message, cause);
        assertSafe(error.message);
      },
    );
  }
});

test("malformed JSON from the Sentry is returned as text and parseTriage says not ok", async () => {
  await withFake(
    () => ({
      content: '{"mode": "split", "task_type": "research", "subtasks": [',
      usage: { prompt_tokens: 50, completion_tokens: 12 },
    }),
    async (_fake, model) => {
      const reply = await model.generate(sentryRequest());
      assert.equal(reply.usage, { inputTokens: 50, outputTokens: 12 });
      const parsed = parseTriage(reply.text);
      assert.not.ok(parsed.ok);
    },
  );
});

test("a body that is not a chat completion fails as a malformed reply", async () => {
  await withFake(
    () => ({ rawBody: "<html>gateway</html>" }),
    async (_fake, model) => {
      const error = await rejection(model.generate(crowRequest()));
      assert.match(error.message, /malformed reply/);
      assertSafe(error.message);
    },
  );
});

test("the caller's abort stops the call", async () => {
  const controller = new AbortController();
  await withFake(
    () => {
      // Abort once the request has reached the server, so the test does not race the connection.
      setTimeout(() => controller.abort(), 20);
      return { content: "late", usage: { prompt_tokens: 1, completion_tokens: 1 }, delayMs: 1_000 };
    },
    async (fake, model) => {
      const request = { ...crowRequest(), signal: controller.signal };
      const error = await rejection(model.generate(request));
      assert.match(error.message, /aborted/);
      assert.is(fake.calls.length, 1);
    },
  );
});

test("the fake server's default script answers each role in its format", async () => {
  await withFake(defaultScript, async (fake, model) => {
    const triage = parseTriage((await model.generate(sentryRequest())).text);
    assert.ok(triage.ok);
    const crow = await model.generate(crowRequest());
    assert.is(crow.text, "fake crow answer");
    assert.ok(crow.usage.inputTokens > 0);
    assert.is(fake.calls.length, 2);
  });
});

test("createModel: offline by default, providers by CROWS_MODEL, ConfigError naming the variable otherwise", () => {
  assert.instance(createModel(loadConfig({}), {}), OfflineBrain);
  assert.is(
    createModel(loadConfig({ CROWS_MODEL: "openai:gpt-4o-mini" }), { OPENAI_API_KEY: "sk-x" }).name,
    "openai:gpt-4o-mini",
  );
  assert.is(
    createModel(loadConfig({ CROWS_MODEL: "anthropic:claude-haiku-4-5" }), { ANTHROPIC_API_KEY: "k" }).name,
    "anthropic:claude-haiku-4-5",
  );
  const bad: Array<[Record<string, string>, RegExp]> = [
    [{ CROWS_MODEL: "gpt-4o" }, /CROWS_MODEL/],
    [{ CROWS_MODEL: "mistral:large" }, /CROWS_MODEL/],
    [{ CROWS_MODEL: "openai:" }, /CROWS_MODEL/],
    [{ CROWS_MODEL: "openai:gpt-4o-mini" }, /CROWS_MODEL_API_KEY or OPENAI_API_KEY/],
    [{ CROWS_MODEL: "anthropic:claude" }, /CROWS_MODEL_API_KEY or ANTHROPIC_API_KEY/],
    [{ CROWS_MODEL: "openai-compatible:llama3" }, /CROWS_MODEL_BASE_URL/],
  ];
  for (const [env, message] of bad) {
    try {
      createModel(loadConfig(env), {});
      assert.unreachable(`expected a ConfigError for ${JSON.stringify(env)}`);
    } catch (error) {
      assert.instance(error, ConfigError, JSON.stringify(env));
      assert.match((error as Error).message, message);
    }
  }
});

test.run();
