// Subscription events written without graphql-js per event (a replay of 10,000 events
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
  getOperationAST,
  type DocumentNode,
  type ExecutionArgs,
  type ExecutionResult,
  type GraphQLSchema,
} from "graphql";
import { buildExecutionContext, execute as toolsExecute } from "@graphql-tools/executor";
import type { Plugin } from "graphql-yoga";
import type { ProjectableSubscription } from "../../../../schema/wire.ts";
import { compileProjector, type Projector } from "./compile.ts";
import { WRITES_PAGES } from "./results.ts";
import { ProjectedStream, type PagedSource } from "./stream.ts";

/**
 * The envelop plugin: a subscription whose selection compiles to a projector gets a subscribe
 * function that maps its events through it; every other operation keeps Yoga's executor.
 */
export function useProjectedSubscriptions(projectable: Readonly<Record<string, ProjectableSubscription>>): Plugin {
  const compiled = new WeakMap<DocumentNode, Map<string, Projector | null>>();
  const projectorOf = (
    schema: GraphQLSchema,
    document: DocumentNode,
    operationName: string | null | undefined,
  ): Projector | undefined => {
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
        const executeOne = (payload: unknown) =>
          toolsExecute({ ...subscribeArgs, rootValue: payload }) as ExecutionResult | Promise<ExecutionResult>;
        const iterator = (source as AsyncIterable<unknown>)[Symbol.asyncIterator]();
        const writesPages =
          (subscribeArgs.contextValue as Record<symbol, unknown> | undefined)?.[WRITES_PAGES] === true;
        const paged =
          writesPages && typeof (iterator as Partial<PagedSource>).nextPage === "function"
            ? (iterator as PagedSource)
            : undefined;
        return new ProjectedStream(iterator, project, executeOne, operation, paged);
      });
    },
  };
}
