// listEvents over both SSE transports on a real server: Yoga's own (POST /graphql, accept
// text/event-stream) and the graphql-sse protocol's distinct-connections mode (/graphql/stream).
// Events go straight into the log for the mechanics; one test drives a real list end to end.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "graphql-sse";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { openSse } from "../helpers/sse.ts";

interface Frame {
  event: string;
  data: any;
}

interface GqlStream {
  status: number;
  contentType: string;
  frames: Frame[];
  /** The `next` payloads' listEvents, in order. */
  events(): Array<{ seq: number; name: string; ts: string; payload: any; raw: string }>;
  waitFor(what: string, done: (frames: Frame[]) => boolean, timeoutMs?: number): Promise<void>;
  ended(): boolean;
  close(): void;
}

/** POSTs a subscription over SSE (the shared test client) and reads its frames. */
async function subscribe(url: string, query: string, variables: Record<string, unknown> = {}): Promise<GqlStream> {
  const sse = await openSse(url, { json: { query, variables } });
  const frames = () => sse.messages().map((m): Frame => ({ event: m.event, data: m.data }));
  return {
    status: sse.status,
    contentType: sse.headers.get("content-type") ?? "",
    get frames() {
      return frames();
    },
    events: () =>
      frames()
        .filter((f) => f.event === "next" && f.data?.data)
        .map((f) => f.data.data.listEvents),
    ended: () => sse.ended(),
    waitFor: async (what, done, timeoutMs = 10_000) => {
      if (done(frames())) return;
      await sse
        .waitFor(() => done(frames()), timeoutMs)
        .catch((error: Error) => {
          throw new Error(`${what}: ${error.message}; got ${JSON.stringify(frames())}`);
        });
    },
    close: () => sse.close(),
  };
}

const LIST_EVENTS = `subscription($listId: ID!, $after: Int) { listEvents(listId: $listId, after: $after) { seq name ts payload raw } }`;
const count = (n: number) => (frames: Frame[]) => frames.filter((f) => f.event === "next").length >= n;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let server: TestServer;

test.before(async () => {
  server = await startTestServer();
});
test.after(async () => {
  await server.close();
});

/** Appends `names` to list:<listId> the way the engine does (payload with list_id and ts). */
async function append(listId: string, ...names: string[]): Promise<void> {
  for (const name of names)
    await server.app.log.append(`list:${listId}`, name, { list_id: listId, note: name, ts: new Date().toISOString() });
}

test("Yoga SSE: POST /graphql with accept text/event-stream replays then streams live events", async () => {
  await append("yoga", "list.started", "item.triaged");
  const stream = await subscribe(server.url + "/graphql", LIST_EVENTS, { listId: "yoga" });
  try {
    assert.is(stream.status, 200);
    assert.match(stream.contentType, /^text\/event-stream/);
    await stream.waitFor("the two stored events", count(2));
    await append("yoga", "crow.flying");
    await stream.waitFor("the live event", count(3));
    const events = stream.events();
    assert.equal(
      events.map((e) => [e.seq, e.name]),
      [
        [1, "list.started"],
        [2, "item.triaged"],
        [3, "crow.flying"],
      ],
    );
    assert.equal(events[0]!.payload, { list_id: "yoga", note: "list.started", ts: events[0]!.payload.ts });
    assert.is(events[0]!.raw, JSON.stringify(events[0]!.payload), "raw is the stored JSON text");
    assert.ok(!Number.isNaN(Date.parse(events[0]!.ts)));
  } finally {
    stream.close();
  }
});

test("graphql-sse: distinct connections mode at /graphql/stream sends `event: next` frames", async () => {
  await append("gsse", "list.started");
  const stream = await subscribe(server.url + "/graphql/stream", LIST_EVENTS, { listId: "gsse" });
  try {
    assert.is(stream.status, 200);
    assert.match(stream.contentType, /^text\/event-stream/);
    await stream.waitFor("the stored event", count(1));
    await append("gsse", "item.triaged", "list.finished");
    await stream.waitFor("the live events", count(3));
    assert.equal(
      stream.events().map((e) => [e.seq, e.name]),
      [
        [1, "list.started"],
        [2, "item.triaged"],
        [3, "list.finished"],
      ],
    );
    assert.ok(
      stream.frames.every((f) => f.event === "next"),
      "no complete or error while the list is open",
    );
  } finally {
    stream.close();
  }
});

for (const [transport, path] of [
  ["Yoga SSE", "/graphql"],
  ["graphql-sse", "/graphql/stream"],
] as const) {
  test(`resume over ${transport}: after N yields exactly the events after N, then live ones`, async () => {
    const listId = `resume-${path.length}`;
    await append(listId, "list.started", "item.triaged", "item.triaged", "crow.flying", "crow.landed");
    const stream = await subscribe(server.url + path, LIST_EVENTS, { listId, after: 3 });
    try {
      await stream.waitFor("events 4 and 5", count(2));
      await append(listId, "item.answered");
      await stream.waitFor("event 6", count(3));
      // A marker after it: events arrive in order, so once it is in, anything extra would be too.
      await append(listId, "list.finished");
      await stream.waitFor("the marker, event 7", count(4));
      assert.equal(
        stream.events().map((e) => [e.seq, e.name]),
        [
          [4, "crow.flying"],
          [5, "crow.landed"],
          [6, "item.answered"],
          [7, "list.finished"],
        ],
      );
    } finally {
      stream.close();
    }
  });
}

test("graphql-sse's own client resumes from a seq and ends the subscription on break", async () => {
  await append("client", "list.started", "item.triaged", "crow.flying");
  const client = createClient({ url: server.url + "/graphql/stream", retryAttempts: 0 });
  const seen: Array<[number, string]> = [];
  try {
    for await (const result of client.iterate<{ listEvents: { seq: number; name: string } }>({
      query: LIST_EVENTS,
      variables: { listId: "client", after: 1 },
    })) {
      assert.is(result.errors, undefined);
      seen.push([result.data!.listEvents.seq, result.data!.listEvents.name]);
      if (seen.length === 2) await append("client", "crow.landed");
      if (seen.length === 3) break;
    }
  } finally {
    client.dispose();
  }
  assert.equal(seen, [
    [2, "item.triaged"],
    [3, "crow.flying"],
    [4, "crow.landed"],
  ]);
});

test("resume at the head: after = last seq sends nothing until the next append", async () => {
  await append("head", "list.started", "item.triaged");
  const stream = await subscribe(server.url + "/graphql", LIST_EVENTS, { listId: "head", after: 2 });
  try {
    // Events arrive in order: had the head sent anything before the next append, it would come first.
    await append("head", "list.finished");
    await stream.waitFor("the live event", count(1));
    assert.equal(
      stream.events().map((e) => e.seq),
      [3],
    );
  } finally {
    stream.close();
  }
});

test("a negative `after` refuses the subscription before it opens: 400 with code bad_input, on both transports", async () => {
  for (const path of ["/graphql/stream", "/graphql"]) {
    const answer = await fetch(server.url + path, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ query: LIST_EVENTS, variables: { listId: "x", after: -1 } }),
    });
    const text = await answer.text();
    assert.is(answer.status, 400, `${path}: ${text}`);
    assert.match(text, /"code":"bad_input"/);
  }
});

test("an `after` the stream never sent (past its end, negative) is refused with a 400 bad_input naming the last seq, on both transports", async () => {
  const followers = () => (server.app.log as unknown as { closers: Set<unknown> }).closers.size;
  const followersBefore = followers();
  await append("pastend", "list.started", "item.triaged", "crow.flying");
  const cases: Array<[string, number, RegExp]> = [
    ["pastend", 4, /last id is 3/],
    ["pastend", 10, /last id is 3/],
    ["pastend", 2_147_483_647, /last id is 3/],
    ["pastend", -1, /last id is 3/],
    ["pastend", -40, /last id is 3/],
    ["never-appended", 1, /sent no event yet/],
    ["never-appended", 7, /sent no event yet/],
  ];
  for (const [listId, after, names] of cases) {
    for (const path of ["/graphql/stream", "/graphql"]) {
      const answer = await fetch(server.url + path, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ query: LIST_EVENTS, variables: { listId, after } }),
      });
      const text = await answer.text();
      assert.is(answer.status, 400, `${listId} after ${after} over ${path}: ${text}`);
      // Yoga answers an event-stream Accept with the result as one SSE `data:` line; graphql-sse with JSON.
      const json = text.trimStart().startsWith("{")
        ? text
        : (text.split("\n").find((l) => l.startsWith("data: ")) ?? "").slice("data: ".length);
      const error = (JSON.parse(json) as { errors: Array<{ message: string; extensions: { code: string } }> })
        .errors[0]!;
      assert.is(error.extensions.code, "bad_input", `${listId} after ${after} over ${path}`);
      assert.match(error.message, names);
      assert.match(error.message, new RegExp(`"${after}"`));
    }
  }
  // The last seq itself and every seq before it still resume.
  for (const after of [0, 1, 2, 3]) {
    const listId = `resumable-${after}`;
    await append(listId, "list.started", "item.triaged", "crow.flying");
    const stream = await subscribe(server.url + "/graphql/stream", LIST_EVENTS, { listId, after });
    try {
      await append(listId, "crow.landed");
      await stream.waitFor(`after ${after}: the stored events, then the live one`, count(4 - after));
      assert.equal(
        stream.events().map((e) => e.seq),
        [1, 2, 3, 4].slice(after),
      );
      assert.is(
        stream.frames.some((f) => f.data?.errors),
        false,
      );
    } finally {
      stream.close();
    }
  }
  // A refusal opens no follower, and the resumed ones end with their clients.
  const deadline = Date.now() + 3000;
  while (followers() > followersBefore && Date.now() < deadline) await sleep(25);
  assert.is(followers(), followersBefore);
});

test("a client that goes away ends its log follower (no leak)", async () => {
  // EventLog keeps one closer per live follower; reaching into it is the only way to see a leak.
  const followers = () => (server.app.log as unknown as { closers: Set<unknown> }).closers.size;
  const before = followers();
  const a = await subscribe(server.url + "/graphql", LIST_EVENTS, { listId: "leak" });
  const b = await subscribe(server.url + "/graphql/stream", LIST_EVENTS, { listId: "leak" });
  await append("leak", "list.started");
  await a.waitFor("an event", count(1));
  await b.waitFor("an event", count(1));
  assert.is(followers(), before + 2);
  a.close();
  b.close();
  const deadline = Date.now() + 3000;
  while (followers() > before && Date.now() < deadline) await sleep(25);
  assert.is(followers(), before, "both followers ended while their streams waited for a live event");
});

test("resume survives a restart: the log is durable and the new server resumes from a seq", async () => {
  await append("durable", "list.started", "item.triaged", "crow.flying");
  server = await server.restart();
  const stream = await subscribe(server.url + "/graphql/stream", LIST_EVENTS, { listId: "durable", after: 1 });
  try {
    await stream.waitFor("events 2 and 3", count(2));
    assert.equal(
      stream.events().map((e) => [e.seq, e.name]),
      [
        [2, "item.triaged"],
        [3, "crow.flying"],
      ],
    );
  } finally {
    stream.close();
  }
});

test("end to end: submitList, then listEvents shows the flock starting and triaging the list", async () => {
  const submitted = await server.post("/graphql", {
    query: `mutation { submitList(text: "buy milk\\nwrite a haiku about crows", requester: "owner") { __typename ... on SubmittedList { listId } } }`,
  });
  const listId: string = submitted.body.data.submitList.listId;
  assert.ok(listId, JSON.stringify(submitted.body));
  const stream = await subscribe(server.url + "/graphql", LIST_EVENTS, { listId });
  try {
    await stream.waitFor(
      "both items triaged",
      () => stream.events().filter((e) => e.name === "item.triaged").length === 2,
      15_000,
    );
    const events = stream.events();
    assert.is(events[0]!.name, "list.started");
    assert.is(events[0]!.payload.list_id, listId);
    assert.is(events[0]!.payload.requester, "owner");
    assert.equal(
      events[0]!.payload.items.map((i: { item_id: string; text: string }) => [i.item_id, i.text]),
      [
        [`${listId}-1`, "buy milk"],
        [`${listId}-2`, "write a haiku about crows"],
      ],
    );
    assert.equal(
      events.map((e) => e.seq),
      events.map((_, i) => i + 1),
      "seqs run from 1 with no gap",
    );
    // The same events the query reads from the log.
    const stored = await server.post("/graphql", {
      query: `query($id: ID!) { events(listId: $id) { seq name raw } }`,
      variables: { id: listId },
    });
    const prefix = stored.body.data.events.slice(0, events.length);
    assert.equal(
      prefix,
      events.map((e) => ({ seq: e.seq, name: e.name, raw: e.raw })),
    );
  } finally {
    stream.close();
  }
});

test("trustChanges follows trust.changed across every list, resumes after an id, then goes live", async () => {
  const change = (listId: string, holder: string, to: number) =>
    server.app.log.append(`list:${listId}`, "trust.changed", {
      list_id: listId,
      holder,
      task_type: "errand",
      from: to - 1,
      to,
      ts: new Date().toISOString(),
    });
  await append("trust-a", "list.started");
  const first = await change("trust-a", "flock", 1);
  await append("trust-b", "list.started", "verdict");
  await change("trust-b", "Hugin", 1);
  const QUERY = `subscription($after: Int) { trustChanges(after: $after) { id holder taskType from to listId ts } }`;
  const changes = (stream: GqlStream) =>
    stream.frames.filter((f) => f.event === "next").map((f) => f.data.data.trustChanges);
  const all = await subscribe(server.url + "/graphql", QUERY, { after: 0 });
  const resumed = await subscribe(server.url + "/graphql/stream", QUERY, { after: first.id });
  try {
    await all.waitFor("both stored changes", (frames) => frames.filter((f) => f.event === "next").length >= 2);
    assert.equal(
      changes(all).map((c) => [c.holder, c.listId, c.from, c.to]),
      [
        ["flock", "trust-a", 0, 1],
        ["Hugin", "trust-b", 0, 1],
      ],
    );
    await resumed.waitFor(
      "the change after the given id",
      (frames) => frames.filter((f) => f.event === "next").length >= 1,
    );
    await change("trust-a", "Munin", 2);
    await resumed.waitFor("the live change", (frames) => frames.filter((f) => f.event === "next").length >= 2);
    assert.equal(
      changes(resumed).map((c) => c.holder),
      ["Hugin", "Munin"],
      "nothing before the id, nothing twice",
    );
    assert.ok(changes(resumed)[1].id > changes(resumed)[0].id);
  } finally {
    all.close();
    resumed.close();
  }
});

test.run();
