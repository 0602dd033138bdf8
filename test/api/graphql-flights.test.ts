// What the owner sees while the flock waits on its provider, and while answers stream: the
// waitingFlights query and flightWaits subscription (which flights wait, and why), the flightText
// subscription (a flight's answer piece by piece, for real providers and the offline brain), and
// /metrics (calls by outcome, waits, queue depth, circuit state). The contract's stream and the
// stored answer are the same as without them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { openSse } from "../helpers/sse.ts";
import { startTestServer } from "../helpers/server.ts";
import {
  assertAllAnswered,
  assertOneLandingPerFlight,
  finish,
  ITEMS,
  of,
  postList,
  weatherServer,
  withWeather,
} from "../helpers/weather.ts";
import type { TestServer } from "../helpers/server.ts";

async function gql(server: TestServer, query: string, variables: Record<string, unknown> = {}) {
  const res = await server.post("/graphql", { query, variables });
  assert.is(res.status, 200, res.text);
  assert.not.ok(res.body.errors, JSON.stringify(res.body.errors));
  return res.body.data;
}

async function subscribe(server: TestServer, query: string, variables: Record<string, unknown>) {
  const sse = await openSse(`${server.url}/graphql`, { json: { query, variables } });
  const payloads = (field: string) =>
    sse
      .messages()
      .filter((m) => m.event === "next" && m.data?.data?.[field])
      .map((m) => m.data.data[field]);
  return { sse, payloads };
}

function metricValues(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const at = line.lastIndexOf(" ");
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

test("while the provider is down: waitingFlights and flightWaits say which flights wait and why; /metrics shows the circuit and the waits", async () => {
  let down = true;
  const run = await weatherServer(
    withWeather(() => (down ? { status: 503, headers: { "retry-after": "2" } } : undefined)),
    { CROWS_MODEL_CIRCUIT_FAILURES: "2" },
  );
  try {
    const items = ITEMS.slice(0, 3);
    const listId = await postList(run.server, items);
    const waits = await subscribe(
      run.server,
      `subscription($id: ID!) { flightWaits(listId: $id) { kind itemId crow wait { reason retryAt retryInSeconds deadline } } }`,
      { id: listId },
    );
    await waits.sse.waitFor(
      () =>
        new Set(
          waits
            .payloads("flightWaits")
            .filter((c) => c.kind === "waiting")
            .map((c) => c.itemId),
        ).size === items.length,
      20_000,
    );
    const read = await gql(
      run.server,
      `query($id: ID!) { waitingFlights(listId: $id) { itemId crow reason retryInSeconds retryAt deadline since } list(id: $id) { waitingFlights { itemId } } }`,
      { id: listId },
    );
    assert.equal(
      read.waitingFlights.map((w: any) => w.itemId).sort(),
      items.map((_, i) => `${listId}-${i + 1}`),
    );
    assert.equal(read.list.waitingFlights.length, items.length);
    for (const wait of read.waitingFlights) {
      assert.is(wait.crow, "Sentry");
      assert.match(wait.reason, /HTTP 503/);
      assert.ok(wait.retryInSeconds >= 0 && wait.retryInSeconds <= 3, `retry in ${wait.retryInSeconds} s`);
      assert.ok(Date.parse(wait.deadline) > Date.parse(wait.since), "the patience ends after the wait began");
    }
    const metrics = metricValues((await run.server.get("/metrics")).text);
    assert.is(metrics.get('crows_provider_circuit_state{gate="model"}'), 2, "the circuit is open");
    assert.ok((metrics.get('crows_provider_calls_total{gate="model",outcome="weather"}') ?? 0) >= 2);
    assert.ok((metrics.get("crows_provider_waits_total") ?? 0) >= items.length);
    assert.is(metrics.get("crows_provider_flights_waiting"), items.length);
    assert.ok((metrics.get('crows_provider_queue_depth{gate="model"}') ?? -1) >= 0);

    down = false;
    const events = await finish(run.server, listId);
    assertAllAnswered(events);
    assertOneLandingPerFlight(events, run.fake.servedTokens);
    await waits.sse.waitFor(
      () =>
        new Set(
          waits
            .payloads("flightWaits")
            .filter((c) => c.kind === "resumed")
            .map((c) => c.itemId),
        ).size === items.length,
      10_000,
    );
    waits.sse.close();
    // kind is the FlightWaitChangeKind enum: both of its words arrived as plain strings, and no change failed to serialize.
    assert.equal([...new Set(waits.payloads("flightWaits").map((c) => c.kind))].sort(), ["resumed", "waiting"]);
    assert.equal(
      waits.sse.messages().filter((m) => m.event === "next" && m.data?.errors),
      [],
      "every change serialized",
    );
    assert.equal(
      (await gql(run.server, `{ waitingFlights { itemId } }`)).waitingFlights,
      [],
      "nothing waits once the list is done",
    );
    const after = metricValues((await run.server.get("/metrics")).text);
    assert.is(after.get('crows_provider_circuit_state{gate="model"}'), 0, "a trial call closed the circuit");
    assert.ok((after.get('crows_provider_calls_total{gate="model",outcome="ok"}') ?? 0) >= items.length * 2);
  } finally {
    await run.close();
  }
});

async function watchTexts(server: TestServer, items: string[]) {
  const listId = await postList(server, items);
  const text = await subscribe(
    server,
    `subscription($id: ID!) { flightText(listId: $id) { flightId itemId crow delta first } }`,
    { id: listId },
  );
  const events = await finish(server, listId);
  // The last pieces may still be on their way when list.finished is read: wait for every answer.
  const joined = () => {
    const byFlight = new Map<string, { itemId: string; crow: string; text: string }>();
    for (const piece of text.payloads("flightText")) {
      const was = byFlight.get(piece.flightId);
      byFlight.set(piece.flightId, {
        itemId: piece.itemId,
        crow: piece.crow,
        text: (piece.first ? "" : (was?.text ?? "")) + piece.delta,
      });
    }
    return byFlight;
  };
  return { listId, events, text, joined };
}

test("answers stream on flightText from a real provider (streamText), and the stored answer is the same text", async () => {
  const run = await weatherServer(
    withWeather((call) =>
      call.system.includes("Do the owner's task")
        ? {
            content: `A long considered answer to: ${call.prompt.slice(-40)}`,
            usage: { prompt_tokens: 20, completion_tokens: 12 },
          }
        : undefined,
    ),
  );
  try {
    const items = ["Buy milk", "Write the release notes", "Fix the login bug"];
    const { events, text, joined } = await watchTexts(run.server, items);
    assertAllAnswered(events);
    assertOneLandingPerFlight(events, run.fake.servedTokens);
    const crowCalls = run.fake.calls.filter((c) => c.system.includes("Do the owner's task"));
    assert.ok(
      crowCalls.every((c) => c.body.stream === true),
      "crows' answers are streamed",
    );
    assert.ok(
      run.fake.calls.filter((c) => c.system.includes("Triage one todo item")).every((c) => c.body.stream !== true),
      "the Sentry's JSON is not",
    );
    for (const answered of of(events, "item.answered")) {
      await text.sse.waitFor(
        () =>
          [...joined().values()].some(
            (f) => f.itemId === answered.data.item_id && f.text.trim() === answered.data.answer,
          ),
        5_000,
      );
      const pieces = text.payloads("flightText").filter((p: any) => p.itemId === answered.data.item_id);
      assert.ok(pieces.length >= 3, `${answered.data.item_id}: streamed in ${pieces.length} pieces`);
    }
    text.sse.close();
    const stored = await run.server.app.prisma.item.findMany({
      where: { listId: of(events, "list.started")[0]!.data.list_id },
    });
    for (const item of stored)
      assert.is(
        item.answer,
        of(events, "item.answered").find((e) => e.data.item_id === item.id)!.data.answer,
        "stored once, as answered",
      );
  } finally {
    await run.close();
  }
});

test("the offline brain streams its answers in a few chunks too", async () => {
  const server = await startTestServer();
  try {
    const { events, text, joined } = await watchTexts(server, [
      "Buy milk",
      "Brainstorm names for a bakery",
      "Research flights to Lisbon and book the cheapest one",
    ]);
    for (const answered of of(events, "item.answered")) {
      await text.sse.waitFor(
        () =>
          [...joined().values()].some(
            (f) => f.itemId === answered.data.item_id && answered.data.answer.includes(f.text.trim().slice(0, 60)),
          ),
        5_000,
      );
    }
    const perFlight = new Map<string, number>();
    for (const piece of text.payloads("flightText"))
      perFlight.set(piece.flightId, (perFlight.get(piece.flightId) ?? 0) + 1);
    assert.ok(
      [...perFlight.values()].every((n) => n >= 2 && n <= 6),
      `a few chunks per flight: ${[...perFlight.values()]}`,
    );
    text.sse.close();
  } finally {
    await server.close();
  }
});

test.run();
