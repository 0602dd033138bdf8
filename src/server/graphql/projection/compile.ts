// Compiles a subscription's per-event selection into a function that writes each event's JSON text,
// or gives up (undefined) when the selection is more than plain wire fields (see plugin.ts).
import {
  getNamedType,
  getOperationAST,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type DocumentNode,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type SelectionSetNode,
} from "graphql";
import type { ProjectableSubscription, WireFields } from "../../../../schema/wire.ts";

/** Returned by a projector for an event it cannot write: graphql's execution answers it. */
const FALLBACK = Symbol("fallback");
type Emit = (source: unknown) => string | typeof FALLBACK;
export type Projector = (source: unknown) => string | undefined;

/**
 * Compiles the per-event writer of `document`'s subscription, or undefined when some part of its
 * selection is not a plain projection (graphql's execution then runs for every event).
 */
export function compileProjector(
  schema: GraphQLSchema,
  document: DocumentNode,
  operationName: string | null | undefined,
  projectable: Readonly<Record<string, ProjectableSubscription>>,
): Projector | undefined {
  const operation = getOperationAST(document, operationName ?? undefined);
  const subscriptionType = schema.getSubscriptionType();
  if (!operation || operation.operation !== "subscription" || !subscriptionType) return undefined;
  if (operation.directives?.length) return undefined;
  const [root, ...others] = operation.selectionSet.selections;
  if (!root || others.length > 0 || root.kind !== "Field" || root.directives?.length || !root.selectionSet)
    return undefined;
  const wire = projectable[root.name.value];
  const rootField = subscriptionType.getFields()[root.name.value];
  if (!wire || !rootField || isListType(isNonNullType(rootField.type) ? rootField.type.ofType : rootField.type))
    return undefined;
  const type = getNamedType(rootField.type);
  if (!isObjectType(type)) return undefined;
  const emits = new Map<string, Emit>();
  if (!collect(document, type, root.selectionSet, wire.fields as WireFields<unknown>, emits)) return undefined;
  const key = (root.alias ?? root.name).value;
  const parts = [...emits].map(([responseKey, emit]) => [`"${responseKey}":`, emit] as const);
  const head = `{"data":{"${key}":{`;
  return (source) => {
    if (source === null || typeof source !== "object") return undefined;
    let text = head;
    for (let i = 0; i < parts.length; i++) {
      const [prefix, emit] = parts[i]!;
      const value = emit(source);
      if (value === FALLBACK) return undefined;
      text += i === 0 ? prefix + value : "," + prefix + value;
    }
    return text + "}}}";
  };
}

/** graphql's CollectFields for a selection that stays on `type`: response keys in first-seen order. */
function collect(
  document: DocumentNode,
  type: GraphQLObjectType,
  selectionSet: SelectionSetNode,
  wire: WireFields<unknown>,
  into: Map<string, Emit>,
): boolean {
  for (const selection of selectionSet.selections) {
    if (selection.directives?.length) return false;
    if (selection.kind === "Field") {
      if (selection.arguments?.length || selection.selectionSet) return false;
      const responseKey = (selection.alias ?? selection.name).value;
      const emit = emitterOf(type, selection.name.value, wire);
      if (!emit) return false;
      if (!into.has(responseKey)) into.set(responseKey, emit); // validation: one key, one field
      continue;
    }
    const condition =
      selection.kind === "InlineFragment"
        ? selection.typeCondition
        : fragmentNamed(document, selection.name.value)?.typeCondition;
    if (selection.kind === "FragmentSpread" && !fragmentNamed(document, selection.name.value)) return false;
    if (condition && condition.name.value !== type.name) return false;
    const inner =
      selection.kind === "InlineFragment"
        ? selection.selectionSet
        : fragmentNamed(document, selection.name.value)!.selectionSet;
    if (!collect(document, type, inner, wire, into)) return false;
  }
  return true;
}

function fragmentNamed(document: DocumentNode, name: string) {
  for (const definition of document.definitions) {
    if (definition.kind === "FragmentDefinition" && definition.name.value === name) {
      if (definition.directives?.length) return undefined;
      return definition;
    }
  }
  return undefined;
}

function emitterOf(type: GraphQLObjectType, fieldName: string, wire: WireFields<unknown>): Emit | undefined {
  if (fieldName === "__typename") {
    const text = JSON.stringify(type.name);
    return () => text;
  }
  const field = type.getFields()[fieldName];
  const how = Object.hasOwn(wire, fieldName) ? wire[fieldName] : undefined;
  if (!field || !how || field.args.length > 0) return undefined;
  const nonNull = isNonNullType(field.type);
  const leaf = isNonNullType(field.type) ? field.type.ofType : field.type;
  if (!isLeafType(leaf)) return undefined;
  if ("json" in how) {
    const read = how.json;
    return (source) => {
      const text = read(source);
      return typeof text !== "string" || (text === "null" && nonNull) ? FALLBACK : text;
    };
  }
  const read = how.value;
  const scalar: GraphQLLeafType = leaf;
  return (source) => {
    const value = read(source);
    if (value === null || value === undefined) return nonNull ? FALLBACK : "null";
    let serialized: unknown;
    try {
      serialized = scalar.serialize(value);
    } catch {
      return FALLBACK; // graphql reports it as a field error: let it
    }
    if (serialized === undefined) return FALLBACK;
    return JSON.stringify(serialized);
  };
}
