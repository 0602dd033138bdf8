// What a query may ask for, counted before it runs: every field it selects, multiplied by how many
// times it can be resolved. A list multiplies its selection by its bound: the `limit`, `first` or
// `last` it was given (a literal or a variable; absent, the argument's default), held to the
// field's page maximum; a list without such an argument by its size in LIST_BOUNDS (a list's 50
// items, an item's 2 approvals); any other list by DEFAULT_LIST_BOUND. A field that is not a list
// but takes `first`/`last`/`limit` (a relay connection) multiplies by it too, and the lists just
// under it (`edges`, `nodes`) count once, since their page is already counted. So the cost is an
// upper bound on the values an answer can hold (a field of long text counts as several:
// FIELD_WEIGHTS). graphql-armor's static cost, which does not
// multiply, let 15 aliases of `lists(limit:100){ items { list { items { text } } } }` run for
// minutes. Introspection (`__schema`, `__type`) is not counted, as the depth limit does not count
// it. The rule is stated in docs/graphql.md "What a query costs".
import { DEFAULT_CONNECTION_PAGE, MAX_PAGE } from "../../../base/util/clamp.ts";
import {
  getNamedType,
  getNullableType,
  isListType,
  isObjectType,
  isInterfaceType,
  Kind,
  valueFromASTUntyped,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";

/** The most a query may cost; docs/security.md says why this value. */
export const MAX_QUERY_COST = 100_000;

/** A list with no size argument counts this many, unless LIST_BOUNDS names it. */
export const DEFAULT_LIST_BOUND = 100;

/** Arguments that say how many items a field answers with. */
const SIZE_ARGUMENTS = ["first", "last", "limit"] as const;

/**
 * Per field: `max`, the page maximum its size argument is held to (what the resolver's pageLimit
 * clamps to), `fallback` when it has no schema default, or `size`, how many a list without a size
 * argument can hold, or fewer when one of the `narrowedBy` arguments is given (one holder's records).
 */
export const LIST_BOUNDS: Readonly<
  Record<string, { max?: number; fallback?: number; size?: number; narrowedBy?: Record<string, number> }>
> = {
  "Query.lists": { max: 100 },
  "Query.events": { max: 1000 },
  "Query.messages": { max: 1000 },
  "Query.approvals": { max: 500 },
  "Query.classifierAnswers": { max: 500, fallback: 50 },
  "Nest.lists": { max: 100 },
  "Nest.messages": { max: 1000 },
  // No `last` answers all of them, which no number bounds: counted as 100, and the answer cap and
  // the deadline bound the rest. `last` (1 to 1000) is a bounded page.
  "TrustRecord.history": { max: 1000, fallback: 100 },
  "TodoList.items": { size: 50 }, // MAX_ITEMS
  "TodoList.events": { size: 1000 },
  "Item.approvals": { size: 2 }, // one per target
  "Item.crows": { size: 8 },
  "Item.subtasks": { size: 8 },
  "Nest.crows": { size: 8 },
  "Query.nests": { size: 20 }, // MAX_NESTS
  "Query.personas": { size: 12 },
  "Query.roster": { size: 8 },
  "Query.crows": { size: 100 },
  // Holders (8 workers, 8 spun at the default cap, flock, the Sentry) x 6 task types; one holder's is 6.
  "Query.trust": { size: 120, narrowedBy: { holder: 6, taskType: 20 } },
  "Persona.trust": { size: 6 }, // TASK_TYPES
  "SpunCrow.trust": { size: 6 },
  "Query.asks": { size: 1000 },
  "Query.quarantines": { size: 200 },
  // Cursor connections (schema/connection.ts): first/last 0 to MAX_PAGE, 20 a page without either.
  ...Object.fromEntries(
    [
      "Query.listsConnection",
      "Query.eventsConnection",
      "Query.messagesConnection",
      "Query.trustHistory",
      "Query.approvalsConnection",
      "TodoList.itemsConnection",
      "TodoList.eventsConnection",
      "Nest.messagesConnection",
      "TrustRecord.historyConnection",
    ].map((field) => [field, { max: MAX_PAGE, fallback: DEFAULT_CONNECTION_PAGE }]),
  ),
};

/**
 * Fields whose one value can be long text (an item is up to 2,000 characters, a list up to 50
 * of them, a payload carries a crow's answer): each counts this many instead of 1.
 */
export const FIELD_WEIGHTS: Readonly<Record<string, number>> = {
  "Item.text": 10,
  "Item.answer": 10,
  "TodoList.text": 50,
  "Event.payload": 10,
  "Event.raw": 10,
  "Message.text": 10,
};

type Variables = Readonly<Record<string, unknown>> | null | undefined;

/**
 * A field's size argument as asked (a literal or a variable; else its default), NaN when it takes
 * one but none was given and none has a default, undefined when it takes none.
 */
function askedSize(
  field: GraphQLField<unknown, unknown>,
  node: { arguments?: readonly import("graphql").ArgumentNode[] },
  variables: Variables,
): number | undefined {
  let takesOne = false;
  for (const name of SIZE_ARGUMENTS) {
    const definition = field.args.find((a) => a.name === name);
    if (!definition) continue;
    takesOne = true;
    const given = node.arguments?.find((a) => a.name.value === name);
    let value: unknown = undefined;
    if (given)
      value =
        given.value.kind === Kind.VARIABLE
          ? variables?.[given.value.name.value]
          : valueFromASTUntyped(given.value, variables ?? undefined);
    if (value === undefined || value === null) value = definition.defaultValue;
    if (typeof value === "number" && Number.isFinite(value)) return value;
  }
  return takesOne ? Number.NaN : undefined;
}

function multiplier(
  parentName: string,
  field: GraphQLField<unknown, unknown>,
  node: Parameters<typeof askedSize>[1],
  variables: Variables,
  underPage: boolean,
): { times: number; sized: boolean } {
  const bound = LIST_BOUNDS[`${parentName}.${field.name}`];
  const asked = askedSize(field, node, variables);
  if (asked !== undefined) {
    const max = bound?.max ?? Number.MAX_SAFE_INTEGER;
    const n = Number.isNaN(asked) ? (bound?.fallback ?? bound?.max ?? DEFAULT_LIST_BOUND) : asked;
    return { times: Math.min(max, Math.max(1, Math.floor(n))), sized: true };
  }
  if (!isListType(getNullableType(field.type))) return { times: 1, sized: false };
  if (underPage) return { times: 1, sized: false };
  let times = bound?.size ?? DEFAULT_LIST_BOUND;
  for (const [argument, size] of Object.entries(bound?.narrowedBy ?? {})) {
    if (node.arguments?.some((a) => a.name.value === argument)) times = Math.min(times, size);
  }
  return { times, sized: false };
}

/**
 * The cost of `document`'s operation with these variables. Fragments are costed once each (a
 * fragment spread a thousand times is not walked a thousand times); graphql-js's validation has
 * already refused fragment cycles and unknown fields, and the depth limit bounds the nesting.
 */
export function queryCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  variables: Variables,
): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  let operation: OperationDefinitionNode | undefined;
  for (const definition of document.definitions) {
    if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);
    else if (
      definition.kind === Kind.OPERATION_DEFINITION &&
      (operationName ? definition.name?.value === operationName : !operation)
    )
      operation = definition;
  }
  if (!operation) return 0;
  const root =
    operation.operation === "query"
      ? schema.getQueryType()
      : operation.operation === "mutation"
        ? schema.getMutationType()
        : schema.getSubscriptionType();
  if (!root) return 0;
  // A variable the request left out takes the operation's default for it.
  const given = variables ?? {};
  const withDefaults: Record<string, unknown> = {};
  for (const definition of operation.variableDefinitions ?? []) {
    const name = definition.variable.name.value;
    if (definition.defaultValue) withDefaults[name] = valueFromASTUntyped(definition.defaultValue);
  }
  variables = { ...withDefaults, ...given };
  const fragmentCost = new Map<string, number>();

  const costOf = (type: GraphQLNamedType, selectionSet: SelectionSetNode, underPage: boolean): number => {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const name = selection.name.value;
        if (name === "__schema" || name === "__type") continue;
        if (name === "__typename") {
          total += 1;
          continue;
        }
        if (!isObjectType(type) && !isInterfaceType(type)) continue;
        const field = type.getFields()[name];
        if (!field) continue;
        const { times, sized } = multiplier(type.name, field, selection, variables, underPage);
        const inner = selection.selectionSet
          ? costOf(getNamedType(field.type), selection.selectionSet, sized && !isListType(getNullableType(field.type)))
          : 0;
        total += times * ((FIELD_WEIGHTS[`${type.name}.${name}`] ?? 1) + inner);
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        const on = selection.typeCondition ? schema.getType(selection.typeCondition.name.value) : type;
        if (on) total += costOf(on, selection.selectionSet, underPage);
      } else {
        const name = selection.name.value;
        const key = `${name}\u0000${underPage}`;
        let cost = fragmentCost.get(key);
        if (cost === undefined) {
          const fragment = fragments.get(name);
          const on = fragment ? schema.getType(fragment.typeCondition.name.value) : undefined;
          fragmentCost.set(key, 0); // a cycle (refused by validation anyway) costs nothing twice
          cost = fragment && on ? costOf(on, fragment.selectionSet, underPage) : 0;
          fragmentCost.set(key, cost);
        }
        total += cost;
      }
    }
    return total;
  };
  return costOf(root, operation.selectionSet, false);
}
