// Subscription events written without graphql-js per event (issue 9: a replay of 10,000 events
// spent most of its time in a full `execute` per event, a JSON.parse of the stored payload and a
// JSON.stringify of the result).
//
// A subscription whose per-event selection is only plain leaf fields of a type that declares its
// wire form (schema/events.ts `eventWireFields`), with aliases, __typename and fragments on that
// type and no directives or arguments, is compiled once per document into a function that writes
// the result's JSON text straight from the stored event: the stored `payload` text is passed
// through as it is (the log stores JSON.stringify's text, so re-parsing and re-serializing it gives
// the same bytes). Anything else (another field, a directive, a null in a non-null field, a
// serializer that throws) runs graphql's own execution, for the document or for that one event.
// test/graphql-projection.test.ts compares the two over many varied selections and payloads.
//
// The stream itself still comes from graphql-js's createSourceEventStream (the subscribe resolver
// runs as before, so a refused `after` is still an error result before any stream opens), and the
// plugin only swaps envelop's subscribe function: masking, metrics and limits wrap it as before.
import {
  createSourceEventStream,
  getNamedType,
  getOperationAST,
  GraphQLError,
  isLeafType,
  isListType,
  isNonNullType,
  isObjectType,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLLeafType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from "graphql";
import { buildExecutionContext, execute as toolsExecute } from "@graphql-tools/executor";
import type { Plugin } from "graphql-yoga";

/** How one leaf field reads its value off the event: a value its scalar serializes, or its JSON text. */
/** `json` may answer undefined: that event is then executed by graphql. */
export type WireField<T> = { value: (source: T) => unknown } | { json: (source: T) => string | undefined };
export type WireFields<T> = Readonly<Record<string, WireField<T>>>;

/** A subscription field whose per-event value is the source event itself, of a type with wire fields. */
export interface ProjectableSubscription {
  fields: WireFields<never>;
}

const ISO_MS = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.\d{3}Z$/;

/**
 * The JSON of an ISO timestamp that is already what `Date#toISOString` writes (a real calendar date,
 * milliseconds, Z): the DateTime scalar (`new Date(value).toISOString()`) would write it unchanged,
 * and parsing then formatting a Date per event was most of a replay's projection. Anything else:
 * undefined (graphql serializes it).
 */
export function isoTimestampJson(ts: string): string | undefined {
  const match = ISO_MS.exec(ts);
  if (!match) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  if (month < 1 || month > 12 || day < 1 || Number(match[4]) > 23 || Number(match[5]) > 59 || Number(match[6]) > 59) return undefined;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = month === 2 ? (leap ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
  return day <= days ? `"${ts}"` : undefined;
}

/** Returned by a projector for an event it cannot write: graphql's execution answers it. */
const FALLBACK = Symbol("fallback");
type Emit = (source: unknown) => string | typeof FALLBACK;
export type Projector = (source: unknown) => string | undefined;

/**
 * A result whose JSON text is already written. Yoga's SSE writer calls `stringify` (its hook for
 * pre-serialized results); anything else that reads it (`data`, JSON.stringify) gets the same value.
 */
export class ProjectedResult implements ExecutionResult {
  constructor(readonly text: string) {}
  get data(): Record<string, unknown> {
    return (JSON.parse(this.text) as { data: Record<string, unknown> }).data;
  }
  /** Yoga calls it unbound, with the result as its argument. */
  stringify(result: ProjectedResult): string {
    return result.text;
  }
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** The result's JSON text as Yoga and graphql-sse would write it, for a projected result without work. */
export function projectedText(result: unknown): string | undefined {
  return result instanceof ProjectedResult ? result.text : undefined;
}

/**
 * Several projected results in one: handed only to a writer that said it takes them (WRITES_PAGES
 * in its context), which writes each text as its own frame. A replay's page of events then passes
 * graphql's per-result machinery (envelop's hooks, the iterator) once, not once per event.
 */
export class ProjectedPage implements ExecutionResult {
  declare readonly errors?: undefined; // never has any: envelop's hooks (masking) pass it on as it is
  constructor(readonly texts: readonly string[]) {}
}

/** Set in the initial context by a transport that writes ProjectedPage results (src/server/graphql-subscriptions.ts). */
export const WRITES_PAGES = Symbol("writes projected pages");

/** A source that can hand on every event it has in hand (schema/follow.ts pagedFollow). */
interface PagedSource extends AsyncIterator<unknown> {
  nextPage(): Promise<IteratorResult<unknown[]>>;
}

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
  if (!root || others.length > 0 || root.kind !== "Field" || root.directives?.length || !root.selectionSet) return undefined;
  const wire = projectable[root.name.value];
  const rootField = subscriptionType.getFields()[root.name.value];
  if (!wire || !rootField || isListType(isNonNullType(rootField.type) ? rootField.type.ofType : rootField.type)) return undefined;
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
function collect(document: DocumentNode, type: GraphQLObjectType, selectionSet: SelectionSetNode, wire: WireFields<unknown>, into: Map<string, Emit>): boolean {
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
    const condition = selection.kind === "InlineFragment" ? selection.typeCondition : fragmentNamed(document, selection.name.value)?.typeCondition;
    if (selection.kind === "FragmentSpread" && !fragmentNamed(document, selection.name.value)) return false;
    if (condition && condition.name.value !== type.name) return false;
    const inner = selection.kind === "InlineFragment" ? selection.selectionSet : fragmentNamed(document, selection.name.value)!.selectionSet;
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

/**
 * The results of a projected subscription: each event written by the projector, or executed. For a
 * page writer over a paged source, every event in hand that projects goes out as one ProjectedPage;
 * an event that does not is executed and handed on alone, in its place.
 */
class ProjectedStream implements AsyncIterableIterator<ExecutionResult> {
  /** Events taken from a page but not yet handed on. */
  private held: unknown[] = [];

  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly project: Projector,
    private readonly executeOne: (payload: unknown) => ExecutionResult | Promise<ExecutionResult>,
    private readonly operation: OperationDefinitionNode,
    private readonly paged: PagedSource | undefined,
  ) {}

  async next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.paged) return this.nextOfPage(this.paged);
    const step = await this.pull(() => this.source.next());
    if (step.done) return { done: true, value: undefined };
    const text = this.project(step.value);
    return { done: false, value: text !== undefined ? new ProjectedResult(text) : await this.executeOne(step.value) };
  }

  private async nextOfPage(paged: PagedSource): Promise<IteratorResult<ExecutionResult>> {
    if (this.held.length === 0) {
      const step = await this.pull(() => paged.nextPage());
      if (step.done) return { done: true, value: undefined };
      this.held = step.value;
      if (this.held.length === 0) return this.nextOfPage(paged);
    }
    const texts: string[] = [];
    let taken = 0;
    for (; taken < this.held.length; taken++) {
      const text = this.project(this.held[taken]);
      if (text === undefined) break;
      texts.push(text);
    }
    if (taken > 0) {
      this.held = taken === this.held.length ? [] : this.held.slice(taken);
      return { done: false, value: new ProjectedPage(texts) };
    }
    const [first, ...rest] = this.held;
    this.held = rest;
    return { done: false, value: await this.executeOne(first) };
  }

  private async pull<R>(step: () => Promise<R>): Promise<R> {
    try {
      return await step();
    } catch (error) {
      // As graphql-tools' subscribe reports a failing source.
      throw new GraphQLError((error as Error)?.message ?? String(error), { originalError: error as Error, nodes: [this.operation] });
    }
  }

  async return(value?: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.source.return?.(value);
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    if (this.source.throw) await this.source.throw(error);
    else await this.source.return?.();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * The envelop plugin: a subscription whose selection compiles to a projector gets a subscribe
 * function that maps its events through it; every other operation keeps Yoga's executor.
 */
export function useProjectedSubscriptions(projectable: Readonly<Record<string, ProjectableSubscription>>): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string, Projector | null>>();
  const projectorOf = (schema: GraphQLSchema, document: DocumentNode, operationName: string | null | undefined): Projector | undefined => {
    let byName = compiled.get(document);
    if (!byName) compiled.set(document, (byName = new Map()));
    const key = operationName ?? "";
    if (!byName.has(key)) byName.set(key, compileProjector(schema, document, operationName, projectable) ?? null);
    return byName.get(key) ?? undefined;
  };
  return {
    onSubscribe({ args, subscribeFn, setSubscribeFn }) {
      const project = projectorOf(args.schema, args.document, args.operationName);
      if (!project) return;
      setSubscribeFn(async (subscribeArgs: ExecutionArgs) => {
        // A request error (a variable of the wrong type) is answered exactly as before, coded.
        if (!("schema" in buildExecutionContext(subscribeArgs as never))) return subscribeFn(subscribeArgs);
        const source = await createSourceEventStream(subscribeArgs);
        if (!(Symbol.asyncIterator in source)) return source;
        const operation = getOperationAST(subscribeArgs.document, subscribeArgs.operationName ?? undefined)!;
        const executeOne = (payload: unknown) => toolsExecute({ ...subscribeArgs, rootValue: payload }) as ExecutionResult | Promise<ExecutionResult>;
        const iterator = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        const writesPages = (subscribeArgs.contextValue as Record<symbol, unknown> | undefined)?.[WRITES_PAGES] === true;
        const paged = writesPages && typeof (iterator as Partial<PagedSource>).nextPage === "function" ? (iterator as PagedSource) : undefined;
        return new ProjectedStream(iterator, project, executeOne, operation, paged);
      });
    },
  };
}
