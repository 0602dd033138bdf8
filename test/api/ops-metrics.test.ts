// GET /healthz, /readyz and /metrics on a real server: what a scrape shows after real traffic
// (REST, GraphQL, an SSE stream, a list through approvals, a nest message), read back as numbers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";
import { ownerFollows } from "../helpers/owner.ts";
import { eventually } from "../helpers/scale-services.ts";

/** Prometheus text to { "name{labels}": value }, labels in the order the library prints them. */
function parseMetrics(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(server: TestServer): Promise<Map<string, number>> {
  const res = await fetch(`${server.url}/metrics`);
  assert.is(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/);
  return parseMetrics(await res.text());
}

function sum(metrics: Map<string, number>, prefix: string, having: string[] = []): number {
  let total = 0;
  for (const [key, value] of metrics)
    if (key.startsWith(prefix) && having.every((h) => key.includes(h))) total += value;
  return total;
}

test("health, readiness, and metrics that follow real traffic", async () => {
  const server = await startTestServer({ env: { CROWS_APPROVAL_WINDOW_MS: "60000" } });
  try {
    const health = await server.get("/healthz");
    assert.is(health.status, 200);
    assert.is(health.body.status, "ok");
    const ready = await server.get("/readyz");
    assert.is(ready.status, 200);
    assert.equal(ready.body, { status: "ready", checks: { database: "ok", storage: "ok" } });
    assert.is((await server.post("/healthz", {})).status, 405);

    const before = await scrape(server);
    assert.is(sum(before, "crows_events_appended_total"), 0);
    assert.is(before.get("crows_approvals_pending"), 0);

    const posted = await server.post("/api/lists", {
      text: "- buy milk\n- call the plumber\n- write a haiku",
      requester: "ana",
    });
    assert.is(posted.status, 202);
    const listId = posted.body.list_id as string;
    assert.is((await server.get("/api/nope")).status, 404);
    const gql = await server.post("/graphql", { query: "{ __typename }" });
    assert.is(gql.status, 200);
    const bad = await server.post("/graphql", { query: "{ nothingHere }" });
    assert.ok(bad.body.errors?.length > 0);

    const sse = await openSse(`${server.url}/api/events?list_id=${listId}`);
    const subscription = await openSse(`${server.url}/graphql/stream`, {
      json: {
        query: "subscription ($id: ID!) { listEvents(listId: $id, after: 0) { seq name } }",
        variables: { id: listId },
      },
    });
    await sse.waitFor((m) => m.event === "item.triaged" && m.data.needs_approval === true);
    await subscription.waitFor((m) => m.event === "next");
    const during = await scrape(server);
    assert.is(during.get('crows_sse_streams_open{kind="api"}'), 1);
    assert.is(during.get('crows_sse_streams_open{kind="graphql"}'), 1);
    assert.is(
      during.get('crows_graphql_operations_total{type="subscription",field="listEvents",outcome="subscribed"}'),
      1,
    );
    subscription.close();
    assert.ok((during.get("crows_approvals_pending") ?? 0) >= 1, "a triage waits for the owner");

    // The owner approves everything; the list runs to the end.
    sse.close();
    const owner = await ownerFollows(server.url, listId, {}, 30_000);
    const events = await owner.finished;
    owner.sse.close();
    assert.ok(owner.answers.length > 0 && owner.answers.every((a) => a.status === 204), JSON.stringify(owner.answers));
    const posts = await server.post("/api/nests/todo/messages", { author: "owner", text: "Quill, how is the flock?" });
    assert.is(posts.status, 201, posts.text);
    await server.app.chat.idle();

    const after = await scrape(server);
    // The server sees a closed stream when its socket closes: wait for the gauges to say so.
    const closed = await eventually(
      "the closed streams to leave the gauges",
      async () => {
        const now = await scrape(server);
        return now.get('crows_sse_streams_open{kind="api"}') === 0 &&
          now.get('crows_sse_streams_open{kind="graphql"}') === 0
          ? now
          : undefined;
      },
      15_000,
    );
    assert.is(closed.get('crows_sse_streams_open{kind="api"}'), 0, "the stream is no longer counted");
    assert.is(closed.get('crows_sse_streams_open{kind="graphql"}'), 0);
    assert.is(after.get("crows_approvals_pending"), 0);

    const count = (name: string) => events.filter((m) => m.event === name).length;
    for (const name of ["list.started", "item.triaged", "item.answered", "verdict", "list.finished"]) {
      assert.ok(count(name) > 0, name);
      assert.ok(
        (after.get(`crows_events_appended_total{name="${name}"}`) ?? 0) >= count(name),
        `${name}: ${after.get(`crows_events_appended_total{name="${name}"}`)} >= ${count(name)}`,
      );
    }
    assert.is(after.get('crows_verdicts_total{outcome="approved"}'), owner.answers.length);
    assert.is(sum(after, "crows_verdicts_total"), count("verdict"));
    assert.is(after.get('crows_http_requests_total{route="/api/lists",method="POST",status="202"}'), 1);
    assert.is(after.get('crows_http_requests_total{route="/api/unknown",method="GET",status="404"}'), 1);
    assert.is(
      after.get('crows_http_requests_total{route="/api/verdicts",method="POST",status="204"}'),
      owner.answers.length,
    );
    assert.is(after.get('crows_http_request_duration_seconds_count{route="/api/lists",method="POST"}'), 1);
    assert.is(after.get('crows_graphql_operations_total{type="query",field="__typename",outcome="ok"}'), 1);
    assert.is(
      sum(after, "crows_graphql_operations_total"),
      2,
      "the query and the subscription; an invalid query never executes",
    );

    const sentryFlights =
      after.get('crows_model_flights_total{backend="offline:brain-1",role="sentry",outcome="ok"}') ?? 0;
    assert.ok(sentryFlights >= 3, `sentry flights: ${sentryFlights}`);
    assert.ok(sum(after, "crows_model_flights_total", ['role="crow"']) >= 3);
    assert.is(sum(after, "crows_model_flight_duration_seconds_count"), sum(after, "crows_model_flights_total"));
    const tokensUsed = events.find((m) => m.event === "list.finished")!.data.tokens_used as number;
    assert.ok(
      sum(after, "crows_model_tokens_total") >= tokensUsed,
      `${sum(after, "crows_model_tokens_total")} >= ${tokensUsed}`,
    );
    assert.ok(sum(after, "crows_classifier_calls_total") >= 1, "the nest message was classified");
  } finally {
    await server.close();
  }
});

test("readyz answers 503 with the reason when a configured Redis is not connected", async () => {
  const server = await startTestServer();
  try {
    (server.app.config as { redisUrl?: string }).redisUrl = "redis://127.0.0.1:1";
    server.app.bus.isConnected = () => false;
    const res = await server.get("/readyz");
    assert.is(res.status, 503);
    assert.equal(res.body, { status: "not ready", checks: { database: "ok", storage: "ok", redis: "not connected" } });
    assert.is(res.headers.get("retry-after"), "5");
    server.app.bus.isConnected = () => true;
    assert.is((await server.get("/readyz")).status, 200);
  } finally {
    (server.app.config as { redisUrl?: string }).redisUrl = undefined;
    await server.close();
  }
});

test("a failure behind /metrics, /readyz or /healthz is logged by its shape and answered by the one error handler", async () => {
  const lines: string[] = [];
  const server = await startTestServer({ deps: { logLine: (line: string) => lines.push(line) } });
  try {
    server.app.metrics.registry.metrics = () => Promise.reject(new RangeError("collector broke on SECRET-7731"));
    const metrics = await server.get("/metrics");
    assert.is(metrics.status, 500);
    assert.type(metrics.body.message, "string");
    assert.not.match(metrics.text, "SECRET-7731");
    const logged = lines.filter((line) => line.includes("RangeError"));
    assert.is(logged.length, 1, `the failure is logged once: ${JSON.stringify(lines)}`);
    assert.not.match(logged[0]!, "SECRET-7731");
    // A wrong method is the same JSON refusal every other path gives, with Allow.
    for (const path of ["/healthz", "/readyz", "/metrics"]) {
      const wrong = await server.request("POST", path, {});
      assert.is(wrong.status, 405, path);
      assert.is(wrong.headers.get("allow"), "GET, HEAD");
      assert.type(wrong.body.message, "string");
    }
    assert.is((await server.get("/healthz")).status, 200);
  } finally {
    await server.close();
  }
});

test.run();
