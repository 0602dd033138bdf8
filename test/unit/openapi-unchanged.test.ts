// The OpenAPI document the route records derive says what the hand-written one said
// (test/fixtures/openapi-before.json, saved before the records replaced it): the same operations
// (method, path, operationId), parameters (name, in, required, schema), request bodies and
// responses (status codes, content types, schemas after resolving $refs), webhooks, security and
// metadata. Normalized before comparing, because they do not change what a client may send or
// receive: descriptions, summaries and tags (words for people); the order of `required` (a set);
// a named component versus its inline copy ($refs are resolved); `additionalProperties` and
// `$schema` (neither document closes an object, zod's writer may say so explicitly); a one-value
// `enum` versus `const`.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readFileSync } from "node:fs";
import { restDocument } from "../../compat/index.ts";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

const before = JSON.parse(readFileSync(new URL("../fixtures/openapi-before.json", import.meta.url), "utf8")) as Json;

const IGNORED = new Set(["description", "summary", "tags", "additionalProperties", "$schema"]);

const isStrings = (value: Json): boolean => Array.isArray(value) && value.every((v) => typeof v === "string");

/** The document with $refs resolved and the spellings above made one. */
function normalize(doc: Json): Json {
  const root = doc as { components?: { schemas?: Record<string, Json> } };
  const schemas = root.components?.schemas ?? {};
  const walk = (node: Json, seen: readonly string[]): Json => {
    if (Array.isArray(node)) return node.map((n) => walk(n, seen));
    if (node === null || typeof node !== "object") return node;
    const ref = node.$ref;
    if (typeof ref === "string" && ref.startsWith("#/components/schemas/")) {
      const name = ref.slice("#/components/schemas/".length);
      if (seen.includes(name)) return { recursive: name };
      return walk(schemas[name] ?? { missing: name }, [...seen, name]);
    }
    const out: { [key: string]: Json } = {};
    for (const [key, value] of Object.entries(node)) {
      // A property may be named "description": only words (and the tag names of an operation) go.
      if (IGNORED.has(key) && (typeof value !== "object" || (key === "tags" && isStrings(value)))) continue;
      if (key === "additionalProperties" || key === "$schema") continue;
      out[key] = walk(value, seen);
    }
    if (Array.isArray(out.required) && out.required.every((r) => typeof r === "string"))
      out.required = [...(out.required as string[])].sort();
    if (Array.isArray(out.enum) && out.enum.length === 1 && out.const === undefined) {
      out.const = out.enum[0]!;
      delete out.enum;
    }
    return out;
  };
  const { components, ...rest } = doc as { [key: string]: Json };
  const { schemas: _named, ...otherComponents } = (components ?? {}) as { [key: string]: Json };
  return walk({ ...rest, components: otherComponents }, []);
}

/** "post /api/lists" for every operation. */
function operations(doc: Json): Record<string, Json> {
  const paths = (doc as { paths: Record<string, Record<string, Json>> }).paths;
  const out: Record<string, Json> = {};
  for (const [path, item] of Object.entries(paths))
    for (const [method, op] of Object.entries(item)) out[`${method} ${path}`] = op;
  return out;
}

/**
 * Operations added after the fixture was saved, each by the change that added it: the old ones
 * must stay as they were, and nothing else may appear or go.
 */
const ADDED_SINCE = new Set([
  // tool servers (docs/tools.md)
  "post /api/tools/servers",
  "get /api/tools/servers",
  "get /api/tools/servers/{server_id}",
  "delete /api/tools/servers/{server_id}",
  "post /api/tools/servers/{server_id}/policies",
  "post /api/tools/servers/{server_id}/nests",
  // tool calls and standing permissions (docs/tools.md "The approval of a call")
  "get /api/tool-calls",
  "post /api/tool-calls/{call_id}/decision",
  "get /api/tool-permissions",
  "delete /api/tool-permissions/{permission_id}",
  // cancelling a list (docs/rules.md "Cancelling a list")
  "post /api/lists/{list_id}/cancel",
]);

/** Values added since to an enum the old document had (the webhook types a receiver may ask for). */
const ENUM_VALUES_ADDED_SINCE = new Set([
  "tool_call.requested",
  "tool_call.decided",
  // the reminder before an approval's window closes (docs/rules.md "Reminders")
  "approval.reminder",
]);
const withoutAddedEnumValues = (node: Json): Json => {
  if (Array.isArray(node)) return node.map(withoutAddedEnumValues);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === "enum" && Array.isArray(value)
        ? value.filter((v) => !(typeof v === "string" && ENUM_VALUES_ADDED_SINCE.has(v)))
        : withoutAddedEnumValues(value),
    ]),
  );
};

/**
 * What the owner's word (issue 33, docs/rules.md "Reasons", "Rework", "Edits") added to operations
 * and webhooks the old document had, by name: optional body fields and query parameters, a page's
 * 400, a field a webhook's payload carries when there is one. Only these go before comparing, and
 * only while optional: a required one is a change the comparison still sees.
 */
const ADDED_TO_OLD: Record<string, { optional?: string[]; query?: string[]; responses?: string[] }> = {
  "post /api/verdicts": { optional: ["reason", "rework", "edit"] },
  "get /api/export/verdicts": { query: ["with"] },
  "get /api/export/trust-history": { query: ["with"] },
  "post /decide/{link}": { responses: ["400"] },
  "get /api/trust/history": { optional: ["reason"] },
  "webhook approval.decided": { optional: ["reason"] },
  // a reason with the owner's reply to an ask: sent with the post, shown on the reply's record
  "post /api/nests/{nest_id}/messages": { optional: ["reason"] },
  "get /api/nests/{nest_id}/messages": { optional: ["reason"] },
  "webhook ask.resolved": { optional: ["reason"] },
  // notices people already read (docs/webhooks.md "Formats"): an endpoint's body shape
  "post /api/webhooks": { optional: ["format"] },
  "get /api/webhooks": { optional: ["format"] },
  "post /api/webhooks/{id}/rotate-secret": { optional: ["format"] },
};

/** `node` without what ADDED_TO_OLD lists for it. */
function withoutAddedToOld(name: string, node: Json): Json {
  const added = ADDED_TO_OLD[name];
  if (!added || node === null || typeof node !== "object") return node;
  const strip = (n: Json): Json => {
    if (Array.isArray(n)) return n.map(strip);
    if (n === null || typeof n !== "object") return n;
    const out: { [key: string]: Json } = {};
    for (const [key, value] of Object.entries(n)) out[key] = strip(value);
    const required = Array.isArray(n.required) ? (n.required as string[]) : [];
    if (added.optional && out.properties && typeof out.properties === "object" && !Array.isArray(out.properties)) {
      const properties = { ...(out.properties as { [key: string]: Json }) };
      for (const field of added.optional) if (!required.includes(field)) delete properties[field];
      out.properties = properties;
    }
    return out;
  };
  const out = strip(node) as { [key: string]: Json };
  if (added.query && Array.isArray(out.parameters))
    out.parameters = out.parameters.filter((p) => {
      const param = p as { name?: string; in?: string; required?: boolean };
      return !(param.in === "query" && added.query!.includes(param.name ?? "") && param.required !== true);
    });
  if (added.responses && out.responses && typeof out.responses === "object" && !Array.isArray(out.responses))
    out.responses = Object.fromEntries(
      Object.entries(out.responses).filter(([status]) => !added.responses!.includes(status)),
    );
  return out;
}

test("the derived document has the same operations as the hand-written one", () => {
  const was = operations(normalize(before));
  const now = operations(withoutAddedEnumValues(normalize(restDocument() as unknown as Json)));
  const kept = Object.keys(now).filter((name) => !ADDED_SINCE.has(name));
  assert.equal(kept.sort(), Object.keys(was).sort());
  for (const name of ADDED_SINCE) assert.ok(now[name], `${name} is served`);
  for (const [name, op] of Object.entries(was)) assert.equal(withoutAddedToOld(name, now[name]!), op, name);
});

test("the rest of the document (info, webhooks, security) is unchanged, but for additions", () => {
  const {
    paths: _was,
    webhooks: wasHooks,
    info: wasInfo,
    tags: wasTags,
    ...was
  } = normalize(before) as { [key: string]: any };
  const {
    paths: _now,
    webhooks: nowHooks,
    info: nowInfo,
    tags: nowTags,
    ...now
  } = normalize(restDocument() as unknown as Json) as { [key: string]: any };
  assert.equal(now, was);
  for (const tag of wasTags ?? []) assert.ok(JSON.stringify(nowTags).includes(JSON.stringify(tag)), `tag ${tag.name}`);
  // The API's version moves with each addition (its minor); the rest of info stays.
  assert.equal({ ...nowInfo, version: undefined }, { ...wasInfo, version: undefined });
  for (const [type, hook] of Object.entries(wasHooks ?? {}))
    assert.equal(withoutAddedToOld(`webhook ${type}`, nowHooks?.[type]), hook, `webhook ${type}`);
});

test("the comparison notices a changed status, parameter or schema", () => {
  const changed = structuredClone(before) as any;
  changed.paths["/api/verdicts"].post.responses["409"] = changed.paths["/api/verdicts"].post.responses["404"];
  assert.not.equal(
    operations(normalize(changed))["post /api/verdicts"],
    operations(normalize(before))["post /api/verdicts"],
  );
  const param = structuredClone(before) as any;
  param.paths["/api/trust/history"].get.parameters[0].required = true;
  assert.not.equal(operations(normalize(param)), operations(normalize(before)));
  const schema = structuredClone(before) as any;
  schema.components.schemas.VerdictInput.properties.approve.type = "string";
  assert.not.equal(operations(normalize(schema)), operations(normalize(before)));
});

test.run();
