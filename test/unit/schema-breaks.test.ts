// The schema as a contract: the checker refuses a breaking change CHANGELOG.md does not name and
// lets an addition through; and this tree's built schema breaks nothing unnamed against its base
// (main's committed schema/schema.graphql, as scripts/schema-breaks.ts chooses it).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isNamed, schemaBreaks } from "../../schema/breaking.ts";
import { checkSchema } from "../../scripts/schema-breaks.ts";

const BASE = `
type Query { list(id: ID!): TodoList, lists(limit: Int): [TodoList!]! }
type TodoList { id: ID!, status: String!, text: String! }
`;

test("a removed field is a break, refused until the changelog names it", () => {
  const next = BASE.replace(", text: String!", "");
  const [only, ...rest] = schemaBreaks(BASE, next, "# Changelog\n\nNothing yet.\n");
  assert.is(rest.length, 0);
  assert.is(only!.type, "FIELD_REMOVED");
  assert.is(only!.coordinate, "TodoList.text");
  assert.is(only!.named, false);
  assert.is(schemaBreaks(BASE, next, "- Removed `TodoList.text`: read the items.")[0]!.named, true);
});

test("an added field, type or optional argument is no break", () => {
  for (const next of [
    BASE.replace("text: String!", "text: String!, tokensUsed: Int!"),
    BASE + "\ntype Nest { id: ID! }\nextend type Query { nest: Nest }",
    BASE.replace("lists(limit: Int)", "lists(limit: Int, requester: String)"),
    BASE.replace("status: String!", 'status: String! @deprecated(reason: "use state"), state: String'),
  ]) {
    assert.equal(schemaBreaks(BASE, next, ""), [], next);
  }
});

test("type changes, removed fields and enum values, new required arguments: breaks, each with its coordinate", () => {
  const withEnum =
    BASE +
    "\nenum Stage { pending, done }\ninput Filter { a: Int }\nextend type Query { stage: Stage, f(x: Filter): Int }";
  const cases: Array<[string, string, string]> = [
    [withEnum.replace("status: String!", "status: Int!"), "FIELD_CHANGED_KIND", "TodoList.status"],
    [withEnum.replace("status: String!", "status: String"), "FIELD_CHANGED_KIND", "TodoList.status"],
    [
      withEnum.replace("lists(limit: Int)", "lists(limit: Int, requester: String!)"),
      "REQUIRED_ARG_ADDED",
      "Query.lists",
    ],
    [withEnum.replace("lists(limit: Int)", "lists(limit: String)"), "ARG_CHANGED_KIND", "Query.lists"],
    [withEnum.replace("list(id: ID!): TodoList, ", ""), "FIELD_REMOVED", "Query.list"],
    [withEnum.replace("pending, done", "done"), "VALUE_REMOVED_FROM_ENUM", "Stage.pending"],
    [withEnum.replace("{ a: Int }", "{ a: Int, b: Int! }"), "REQUIRED_INPUT_FIELD_ADDED", "Filter.b"],
  ];
  for (const [next, type, coordinate] of cases) {
    const breaks = schemaBreaks(withEnum, next, "");
    assert.is(breaks.length, 1, next);
    assert.is(breaks[0]!.type, type, next);
    assert.is(breaks[0]!.coordinate, coordinate);
    assert.is(breaks[0]!.named, false);
    assert.is(schemaBreaks(withEnum, next, `- \`${coordinate}\` changed on purpose.`)[0]!.named, true);
  }
  assert.equal(
    schemaBreaks(withEnum, withEnum.replace("pending, done", "pending, done, skipped"), ""),
    [],
    "an added enum value",
  );
});

test("a name counts only in backticks and only whole: `Item.mode` does not name Item.modeTaggedBy", () => {
  assert.ok(isNamed("Item.mode", "- `Item.mode` -> `ItemMode`"));
  assert.ok(isNamed("Query.quarantines", "the argument `Query.quarantines(status:)` too"));
  assert.not.ok(isNamed("Item.modeTaggedBy", "- `Item.mode` -> `ItemMode`"));
  assert.not.ok(isNamed("Item.mode", "Item.mode changed, unquoted"));
  assert.not.ok(isNamed("Item", "- `Item.mode` changed"), "a type's name is not its field's");
});

test("this tree breaks nothing that CHANGELOG.md does not name (against main's committed schema)", () => {
  const { ref, breaks } = checkSchema();
  const unnamed = breaks.filter((b) => !b.named).map((b) => b.description);
  assert.equal(
    unnamed,
    [],
    `breaking changes against ${ref} not named in CHANGELOG.md: add a line naming each, or undo it`,
  );
});

test.run();
