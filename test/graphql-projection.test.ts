// A listEvents subscription's per-event JSON written by the projector
// (src/server/subscription-projection.ts) is byte for byte what graphql's own execution writes, over
// many varied selections (aliases, __typename, inline and named fragments, field order, repeats)
// and payloads (unicode, escapes, numbers, nesting, odd keys); a selection it cannot write, or an
// event it cannot write (a null payload), is left to graphql.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parse, validate, type DocumentNode } from "graphql";
import { execute } from "@graphql-tools/executor";
import { schema } from "../schema/index.ts";
import { projectableSubscriptions } from "../schema/events.ts";
import { compileProjector } from "../src/server/subscription-projection.ts";
import type { StoredEvent } from "../src/log/event-log.ts";

const payloads: unknown[] = [
  {},
  { list_id: "l1", ts: "2026-01-02T03:04:05.678Z" },
  { text: "crows \u00e9\u00e8 \ud83d\udc26 \u2028\u2029 \"quoted\" \\back\\ \n\t\r\u0000\u001f" },
  { lone: "\ud800 and \udfff" },
  { n: 0, neg: -0, big: 1e21, small: 1e-7, pi: 3.141592653589793, max: Number.MAX_SAFE_INTEGER, t: true, f: false, none: null },
  { nested: { a: [1, [2, [3, { b: [] }]], {}], c: { d: { e: "deep" } } } },
  { ["__proto__"]: { polluted: true }, constructor: "x", "": "empty key", "1": "numeric key", "a b": "space" },
  { array: Array.from({ length: 50 }, (_, i) => ({ i, s: "x".repeat(i) })) },
];
// The log stores JSON.stringify's text (src/log/event-log.ts); a payload object parsed from JSON keeps "__proto__" as an own key.
const payloadTexts = payloads.map((p, i) =>
  JSON.stringify(i === 6 ? JSON.parse('{"__proto__":{"polluted":true},"constructor":"x","":"empty key","1":"numeric key","a b":"space"}') : p),
);

const events: StoredEvent[] = payloadTexts.map((payload, i) => ({
  id: 100 + i,
  stream: i % 2 ? "list:lst\u00e9" : "list:abc",
  seq: i + 1,
  name: ["list.started", "item.triaged", "crow.flying", "x\u2028y", 'quo"te'][i % 5]!,
  payload,
  ts: new Date(Date.UTC(2026, 0, 1, 0, 0, i, i * 7)).toISOString(),
}));

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
    return rand() < 0.3 ? `${["a", "b", "seq", "payload", "x_1"][Math.floor(rand() * 5)]}${name === "__typename" ? "t" : ""}: ${name}` : name;
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
  const result = await execute({ schema, document, rootValue: event, contextValue: {}, variableValues: { listId: "abc" } });
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
    for (const event of events) {
      assert.is(project(event), await graphqlText(document, event), `${source}\nfor payload ${event.payload}`);
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
  assert.is(compileProjector(schema, raw, undefined, projectableSubscriptions)!(nullPayload), await graphqlText(raw, nullPayload));
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

test("the log stores a payload as JSON.stringify's text, which re-serializes to itself", () => {
  for (const text of payloadTexts) assert.is(JSON.stringify(JSON.parse(text)), text);
});

test.run();
