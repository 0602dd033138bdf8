// A listEvents subscription's per-event JSON written by the projector
// (src/server/graphql/projection/) is byte for byte what graphql's own execution writes, over
// many varied selections (aliases, __typename, inline and named fragments, field order, repeats)
// and payloads (unicode, escapes, numbers, nesting, odd keys); a selection it cannot write, or an
// event it cannot write (a null payload), is left to graphql.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse, validate, type DocumentNode } from "graphql";
import { execute } from "@graphql-tools/executor";
import { schema } from "../../schema/index.ts";
import { projectableSubscriptions } from "../../schema/events.ts";
import { compileProjector } from "../../src/server/graphql/projection/compile.ts";
import { isoTimestampJson } from "../../schema/wire.ts";
import type { StoredEvent } from "../../src/log/event-log.ts";

const payloads: unknown[] = [
  {},
  { list_id: "l1", ts: "2026-01-02T03:04:05.678Z" },
  { text: 'crows \u00e9\u00e8 \ud83d\udc26 \u2028\u2029 "quoted" \\back\\ \n\t\r\u0000\u001f' },
  { lone: "\ud800 and \udfff" },
  {
    n: 0,
    neg: -0,
    big: 1e21,
    small: 1e-7,
    // biome-ignore lint/suspicious/noApproximativeNumericConstant: a float literal the test round-trips
    pi: 3.141592653589793,
    max: Number.MAX_SAFE_INTEGER,
    t: true,
    f: false,
    none: null,
  },
  { nested: { a: [1, [2, [3, { b: [] }]], {}], c: { d: { e: "deep" } } } },
  { ["__proto__"]: { polluted: true }, constructor: "x", "": "empty key", "1": "numeric key", "a b": "space" },
  { array: Array.from({ length: 50 }, (_, i) => ({ i, s: "x".repeat(i) })) },
];
// The log stores JSON.stringify's text (src/log/event-log.ts); a payload object parsed from JSON keeps "__proto__" as an own key.
const payloadTexts = payloads.map((p, i) =>
  JSON.stringify(
    i === 6
      ? JSON.parse('{"__proto__":{"polluted":true},"constructor":"x","":"empty key","1":"numeric key","a b":"space"}')
      : p,
  ),
);

// Timestamps as toISOString writes them, and some it never writes (the DateTime scalar normalizes those).
const timestamps = [
  new Date(Date.UTC(2026, 0, 1, 0, 0, 1, 7)).toISOString(),
  "2024-02-29T23:59:59.999Z",
  "2000-02-29T00:00:00.000Z",
  "0000-01-01T00:00:00.000Z",
  "9999-12-31T23:59:59.999Z",
  "2026-02-30T00:00:00.000Z",
  "2023-02-29T00:00:00.000Z",
  "2100-02-29T00:00:00.000Z",
  "2026-04-31T12:00:00.000Z",
  "2026-01-01T24:00:00.000Z",
  "2026-01-01T00:00:00Z",
  "2026-01-01T00:00:00.000+00:00",
  "2026-01-01 00:00:00.000",
];
const isCanonical = (ts: string) => {
  try {
    return new Date(ts).toISOString() === ts;
  } catch {
    return false; // not a date at all: the scalar throws, graphql reports a field error
  }
};

const events: StoredEvent[] = payloadTexts.flatMap((payload, i) =>
  timestamps.map((ts, j) => ({
    id: 100 + i,
    stream: i % 2 ? "list:lst\u00e9" : "list:abc",
    seq: i * timestamps.length + j + 1,
    name: ["list.started", "item.triaged", "crow.flying", "x\u2028y", 'quo"te'][(i + j) % 5]!,
    payload,
    ts,
  })),
);

const FIELDS = ["seq", "name", "ts", "stream", "payload", "raw", "__typename"];

/** A small deterministic generator, so a failure names a selection that can be replayed. */
function random(seed: number) {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** A varied selection of Event's fields: aliases, repeats, inline and named fragments, any order. */
function selection(seed: number): { body: string; fragments: string } {
  const rand = random(seed);
  const pick = () => FIELDS[Math.floor(rand() * FIELDS.length)]!;
  const field = () => {
    const name = pick();
    return rand() < 0.3
      ? `${["a", "b", "seq", "payload", "x_1"][Math.floor(rand() * 5)]}${name === "__typename" ? "t" : ""}: ${name}`
      : name;
  };
  const fragments: string[] = [];
  const parts: string[] = [];
  const count = 1 + Math.floor(rand() * 6);
  for (let i = 0; i < count; i++) {
    const r = rand();
    if (r < 0.6) parts.push(field());
    else if (r < 0.75) parts.push(`... on Event { ${field()} ${field()} }`);
    else if (r < 0.85) parts.push(`... { ${field()} }`);
    else {
      const name = `F${seed}_${i}`;
      fragments.push(`fragment ${name} on Event { ${field()} ${field()} }`);
      parts.push(`...${name}`);
    }
  }
  return { body: parts.join(" "), fragments: fragments.join("\n") };
}

/** Fields with the same response key must be the same field (graphql validation): keep such selections only. */
function valid(document: DocumentNode): boolean {
  return validate(schema, document).length === 0;
}

async function graphqlText(document: DocumentNode, event: StoredEvent): Promise<string> {
  const result = await execute({
    schema,
    document,
    rootValue: event,
    contextValue: {},
    variableValues: { listId: "abc" },
  });
  return JSON.stringify(result);
}

test("the projector writes what graphql writes, for many selections and payloads", async () => {
  let compared = 0;
  let seed = 1;
  let tried = 0;
  while (compared < 150 && tried < 2000) {
    tried += 1;
    const { body, fragments } = selection(seed++);
    const rootAlias = seed % 3 === 0 ? "stream: " : seed % 3 === 1 ? "e: " : "";
    const source = `subscription S($listId: ID!) { ${rootAlias}listEvents(listId: $listId, after: 0) { ${body} } }\n${fragments}`;
    const document = parse(source);
    if (!valid(document)) continue;
    const project = compileProjector(schema, document, "S", projectableSubscriptions);
    assert.ok(project, `a plain selection is projectable: ${source}`);
    const writesTs = document.loc!.source.body.includes("ts");
    for (const event of events) {
      const text = project(event);
      // An event the projector leaves to graphql: only a timestamp toISOString would not write, and only when selected.
      if (text === undefined) assert.ok(writesTs && !isCanonical(event.ts), `${source}: left ${event.ts} to graphql`);
      else
        assert.is(text, await graphqlText(document, event), `${source}\nfor payload ${event.payload} at ${event.ts}`);
    }
    compared += 1;
  }
  assert.ok(compared >= 150, `only ${compared} valid selections compared`);
});

test("a payload the field cannot carry (null in a non-null field) is left to graphql", async () => {
  const document = parse(`subscription { listEvents(listId: "abc") { seq payload } }`);
  const project = compileProjector(schema, document, undefined, projectableSubscriptions)!;
  const nullPayload = { ...events[0]!, payload: "null" };
  assert.is(project(nullPayload), undefined);
  const result = JSON.parse(await graphqlText(document, nullPayload));
  assert.ok(result.errors?.length > 0, "graphql reports it as an error, which execution then writes");
  // `raw` carries the text as a string: "null" is fine there.
  const raw = parse(`subscription { listEvents(listId: "abc") { seq raw } }`);
  assert.is(
    compileProjector(schema, raw, undefined, projectableSubscriptions)!(nullPayload),
    await graphqlText(raw, nullPayload),
  );
});

test("selections the projector does not write keep graphql's execution", () => {
  const notProjectable = [
    `subscription { listEvents(listId: "a") { seq @include(if: true) } }`,
    `subscription($skip: Boolean!) { listEvents(listId: "a") { seq name @skip(if: $skip) } }`,
    `subscription { listEvents(listId: "a") @include(if: true) { seq } }`,
    `subscription { listEvents(listId: "a") { ...F } } fragment F on Event @include(if: true) { seq }`,
    `subscription { listEvents(listId: "a") { ... @include(if: true) { seq } } }`,
    `subscription { nestMessages(nestId: "todo") { msgId } }`,
    `subscription { trustChanges { id } }`,
    `query { __typename }`,
  ];
  for (const source of notProjectable) {
    assert.is(compileProjector(schema, parse(source), undefined, projectableSubscriptions), undefined, source);
  }
});

test("a timestamp is written as it is exactly when the DateTime scalar would write it unchanged", () => {
  const rand = random(7);
  const samples = [...timestamps];
  for (let i = 0; i < 5000; i++) {
    const pad = (n: number, w = 2) => String(n).padStart(w, "0");
    const year = Math.floor(rand() * 10000);
    samples.push(
      `${pad(year, 4)}-${pad(Math.floor(rand() * 14))}-${pad(Math.floor(rand() * 33))}T${pad(Math.floor(rand() * 26))}:${pad(Math.floor(rand() * 61))}:${pad(Math.floor(rand() * 61))}.${pad(Math.floor(rand() * 1000), 3)}Z`,
    );
    samples.push(new Date(Math.floor(rand() * 253402300799999)).toISOString());
  }
  for (const ts of samples) assert.is(isoTimestampJson(ts), isCanonical(ts) ? JSON.stringify(ts) : undefined, ts);
});

test("the log stores a payload as JSON.stringify's text, which re-serializes to itself", () => {
  for (const text of payloadTexts) assert.is(JSON.stringify(JSON.parse(text)), text);
});

test.run();
