// server.log says what happened and to which id, never what anyone wrote. A marker text goes in as
// list items and a nest message, comes back in model answers, a provider error body and a malformed
// reply; the API key is a marker too; then the whole log (rotated files included) is searched.
// Rotation, one-line framing and the error describer are checked in-process.
import { test } from "uvu";
import * as assert from "uvu/assert";
import path from "node:path";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { baseEnv, crows, removeDir, tempDataDir } from "../helpers/crows-cli.ts";
import { startFakeOpenAI, roleOfSystemPrompt } from "../helpers/fake-openai.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { createServerLog } from "../../src/ops/server-log.ts";
import { describeError } from "../../src/base/describe-error.ts";
import { useGraphQLStream } from "../../src/server/graphql/stream.ts";
import { startServerProcess } from "../helpers/process.ts";

const MARKER = "ZEBRA-MARKER-7731";
const KEY = "sk-test-KEYMARKER-99182";

test("the server log of a real run holds ids and outcomes, never item text, messages, answers, prompts or keys", async () => {
  const fake = await startFakeOpenAI((call, index) => {
    const role = roleOfSystemPrompt(call.system);
    const usage = { prompt_tokens: 10, completion_tokens: 5 };
    if (role === "sentry")
      return {
        content: JSON.stringify({ mode: "solo", task_type: "other", subtasks: [], reason: `because ${MARKER}` }),
        usage,
      };
    if (role === "crow" && index % 3 === 0)
      return { status: 500, rawBody: JSON.stringify({ error: { message: `upstream choked on ${MARKER}` } }) };
    if (role === "crow" && index % 3 === 1) return { rawBody: `{"choices": [ ${MARKER} not json` };
    return { content: `${MARKER} answer for ${role}`, usage };
  });
  const dir = tempDataDir();
  const env = baseEnv(dir, {
    CROWS_MODEL: "openai-compatible:tiny-1",
    CROWS_MODEL_BASE_URL: fake.url,
    CROWS_MODEL_API_KEY: KEY,
    CROWS_MODEL_TIMEOUT_MS: "3000",
    CROWS_APPROVAL_WINDOW_MS: "20000",
  });
  try {
    const up = await crows(["up"], env);
    assert.is(up.code, 0, up.stderr);
    const { url } = JSON.parse(up.stdout);
    const text = [`Buy ${MARKER} milk`, `Call ${MARKER} about the bank`, `Write a haiku on ${MARKER}`].join("\n");
    const posted = await fetch(`${url}/api/lists`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ text, requester: "owner" }),
    });
    assert.is(posted.status, 202);
    const { list_id } = (await posted.json()) as { list_id: string };
    const message = await fetch(`${url}/api/nests/todo/messages`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ author: "owner", text: `Quill, tell everyone ${MARKER}` }),
    });
    assert.is(message.status, 201, await message.clone().text());
    // The owner approves every triage and answer, so crows fly (and some of their calls fail).
    const owner = await ownerFollows(url, list_id, {}, 30_000);
    await owner.finished;
    owner.sse.close();
    assert.ok(
      fake.calls.some((c) => c.prompt.includes(MARKER)),
      "the marker did reach the model",
    );
    const stopped = await crows(["stop"], env);
    assert.is(stopped.code, 0, stopped.stderr);

    const files = readdirSync(dir).filter((f) => f.startsWith("server.log"));
    const log = files.map((f) => readFileSync(path.join(dir, f), "utf8")).join("");
    assert.not.ok(
      log.includes(MARKER),
      `the marker leaked:\n${log
        .split("\n")
        .filter((l) => l.includes(MARKER))
        .join("\n")}`,
    );
    assert.not.ok(log.includes("KEYMARKER"), "the key leaked");
    for (const line of log.split("\n").filter((l) => l !== ""))
      assert.match(line, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \S/, line);
    assert.ok(log.includes(`list accepted: ${list_id} with 3 items`), log);
    assert.match(log, /model call failed: crow \S+ on openai-compatible:tiny-1 after \d+ ms/);
    assert.match(log, /verdict: \S+ (triage|output) (approved|rejected|auto|timeout)/);
    assert.match(log, new RegExp(`list finished: ${list_id}`));
    assert.match(log, /stopped\n$/);
    for (const f of readdirSync(dir)) assert.is(statSync(path.join(dir, f)).mode & 0o777, 0o600, `${f} is owner-only`);
    assert.is(statSync(dir).mode & 0o777, 0o700);
  } finally {
    await crows(["stop"], env);
    await fake.close();
    removeDir(dir);
  }
});

test("a stderr nobody reads any more does not end the server: it goes on serving, and its lines go to server.log", async () => {
  const dir = tempDataDir();
  const proc = await startServerProcess(baseEnv(dir, { CROWS_PORT: "0" }));
  try {
    proc.child.stderr!.destroy(); // the reader goes away, as a dead supervisor's pipe does
    const posted: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${proc.url}/api/lists`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ text: `Buy milk ${i}\nCall the plumber ${i}`, requester: `pipe-${i}` }),
      });
      posted.push(res.status);
      await res.text();
    }
    assert.equal(posted, [202, 202, 202, 202, 202]);
    assert.is((await fetch(`${proc.url}/healthz`)).status, 200);
    assert.is(proc.child.exitCode, null, "still running");
    const log = readFileSync(path.join(dir, "server.log"), "utf8");
    assert.match(log, /log: stderr cannot be written \(EPIPE\); lines go to .*server\.log only/);
    assert.is(log.match(/list accepted: /g)?.length, 5);
    assert.not.match(log, /uncaught/);
    proc.child.kill("SIGTERM");
    assert.is(await proc.exited, 0);
    assert.match(readFileSync(path.join(dir, "server.log"), "utf8"), /stopped/);
  } finally {
    if (proc.child.exitCode === null) proc.child.kill("SIGKILL");
    removeDir(dir);
  }
});

test("rotation keeps 3 files under the size cap, lines stay whole and in order, secrets and line breaks never pass", () => {
  const dir = tempDataDir();
  try {
    const file = path.join(dir, "server.log");
    const log = createServerLog(file, { maxBytes: 2000, secrets: ["hunter2-secret", undefined, ""] });
    for (let i = 0; i < 300; i++) log.line(i === 7 ? "token hunter2-secret in\na two-line\r\nerror" : `event ${i}`);
    assert.equal(readdirSync(dir).sort(), ["server.log", "server.log.1", "server.log.2"]);
    assert.not.ok(existsSync(`${file}.3`));
    const kept = ["server.log.2", "server.log.1", "server.log"].map((f) => readFileSync(path.join(dir, f), "utf8"));
    for (const content of kept) assert.ok(Buffer.byteLength(content) <= 2000, `${Buffer.byteLength(content)} bytes`);
    const numbers = kept
      .join("")
      .split("\n")
      .filter(Boolean)
      .map((l) => Number(/event (\d+)$/.exec(l)?.[1]));
    assert.ok(numbers.length > 20);
    numbers.forEach((n, i) => {
      if (i > 0) assert.is(n, numbers[i - 1]! + 1, "in order, nothing lost inside the kept files");
    });
    assert.is(numbers.at(-1), 299);

    const other = path.join(dir, "framing.log");
    const framing = createServerLog(other, { secrets: ["hunter2-secret"] });
    framing.line("token hunter2-secret in\na two-line\r\nerror");
    framing.line("x".repeat(5000));
    const lines = readFileSync(other, "utf8").split("\n").filter(Boolean);
    assert.is(lines.length, 2);
    assert.match(lines[0]!, /token \[redacted\] in \| a two-line \| error$/);
    assert.ok(lines[1]!.length < 2100);
  } finally {
    removeDir(dir);
  }
});

test("describeError gives an error's shape, never a message that can quote input", () => {
  const samples: unknown[] = [];
  try {
    JSON.parse(`{"answer": ${MARKER}`);
  } catch (error) {
    samples.push(error);
  }
  samples.push(
    new Error(`model said ${MARKER}`),
    new TypeError(`${MARKER} is not a function`),
    Object.assign(new Error(`db ${MARKER}`), { code: "P2002" }),
    MARKER,
    { message: MARKER },
    null,
  );
  for (const sample of samples) {
    const line = describeError(sample);
    assert.not.ok(line.includes(MARKER), line);
    assert.ok(line.length > 0);
  }
  assert.match(describeError(Object.assign(new Error(`x ${MARKER}`), { code: "P2002" })), /^Error code P2002/);
  const system = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
    code: "ECONNREFUSED",
    syscall: "connect",
  });
  assert.match(
    describeError(system),
    /ECONNREFUSED 127\.0\.0\.1:5432/,
    "system errors keep their message: it names no content",
  );
});

test("an unexpected failure inside /graphql/stream is logged by its shape, never its message", async () => {
  const lines: string[] = [];
  const plugin = useGraphQLStream("/graphql/stream", (line) => lines.push(line)) as unknown as {
    onYogaInit(arg: unknown): void;
    onRequest(arg: unknown): Promise<void> | undefined;
  };
  // Whatever breaks inside the protocol handler (here: envelop itself) with a message quoting input.
  plugin.onYogaInit({
    yoga: {
      fetchAPI: globalThis,
      getEnveloped: () => {
        throw new TypeError(`could not read ${MARKER}`);
      },
    },
  });
  const request = new Request("http://127.0.0.1/graphql/stream", {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: JSON.stringify({ query: "{ __typename }" }),
  });
  let answer: Response | undefined;
  await plugin.onRequest({
    request,
    url: new URL(request.url),
    endResponse: (r: Response) => (answer = r),
    serverContext: {},
    fetchAPI: globalThis,
  });
  assert.is(answer?.status, 500);
  assert.not.match(await answer!.text(), MARKER);
  assert.is(lines.length, 1);
  assert.not.match(lines[0]!, MARKER);
  assert.not.match(lines[0]!, /\n/);
  assert.match(lines[0]!, /TypeError at /);
});

test.run();
