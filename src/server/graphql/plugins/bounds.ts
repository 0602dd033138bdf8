// What one GraphQL operation may take, enforced around its execution:
// - its cost (cost.ts), checked before it runs or subscribes, with the variables it came with, and
//   reported on every answer as `extensions.cost: {requested, limit}`;
// - an execution deadline for queries: at the deadline the answer is a coded error, and the work
//   stops there too: every resolver is guarded (guardResolvers), so a field whose parent resolves
//   after the deadline is never started, and the fields still waiting fail at once. Mutations have
//   no deadline: a write that was sent finishes, and answering "timed out" for it would invite a
//   duplicate;
// - a cap on the size of an answer: the answer is serialised once, here, measured, and either sent
//   as that text or replaced by a coded error.
// Subscriptions get the cost check only (their events are bounded by the stream's own rules).
import { GraphQLError, getOperationAST, type ExecutionResult, type GraphQLSchema } from "graphql";
import type { Plugin } from "graphql-yoga";
import { MAX_QUERY_COST, queryCost } from "./cost.ts";

/** Where the deadline of the operation being executed lives in its context. */
const DEADLINE = Symbol("crows.executionDeadline");

interface Deadline {
  at: number;
  passed: boolean;
  /** One error for every field refused past the deadline (thrown many times, built once). */
  error?: DeadlinePassedError;
}

export class DeadlinePassedError extends Error {
  constructor() {
    super("The query ran past its execution deadline.");
  }
}

export interface BoundsOptions {
  deadlineMs: number;
  maxAnswerBytes: number;
}

export const BOUND_CODES = ["QUERY_TOO_COSTLY", "QUERY_TIMEOUT", "ANSWER_TOO_LARGE"] as const;

const costOf = (requested: number) => ({ requested, limit: MAX_QUERY_COST });

/** Checks the cost before anything runs (placed before the read cache, so a cached answer is costed too). */
export function queryCostLimit(): Plugin {
  const check = (args: {
    schema: GraphQLSchema;
    document: import("graphql").DocumentNode;
    operationName?: string | null;
    variableValues?: Readonly<Record<string, unknown>> | null;
  }) => {
    const requested = queryCost(args.schema, args.document, args.operationName, args.variableValues);
    if (requested <= MAX_QUERY_COST) return { requested, refusal: undefined };
    const refusal = new GraphQLError(
      `The query could cost ${requested}, over the limit of ${MAX_QUERY_COST}: ask for fewer items (a smaller limit, first or last) or fewer nested lists.`,
      {
        extensions: { code: "QUERY_TOO_COSTLY", limit: MAX_QUERY_COST, requested, http: { status: 400, spec: false } },
      },
    );
    return { requested, refusal };
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const { requested, refusal } = check(args);
      if (refusal) {
        setResultAndStopExecution({ errors: [refusal], extensions: { cost: costOf(requested) } }); // no `data`: a request error, a 4xx on every transport
        return;
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (!result || Symbol.asyncIterator in result) return;
          const single = result as ExecutionResult;
          setResult(Object.assign(single, { extensions: { ...single.extensions, cost: costOf(requested) } }));
        },
      };
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const { requested, refusal } = check(args);
      if (refusal) setResultAndStopExecution({ errors: [refusal], extensions: { cost: costOf(requested) } });
    },
  };
}

/**
 * Wraps every resolver the schema defines (introspection's aside) so that, inside a query with a
 * deadline, a resolver called after it throws at once, and a resolver whose promise settles after
 * it throws instead of handing its value on (so nothing beneath it is started). Outside a deadline
 * it only passes through. Idempotent: a resolver already guarded is left as it is.
 */
const guards = new WeakSet<object>();
export function guardResolvers(schema: GraphQLSchema): void {
  for (const type of Object.values(schema.getTypeMap())) {
    if (type.name.startsWith("__") || !("getFields" in type) || !("isTypeOf" in type || "resolveType" in type))
      continue;
    const fields = (type as { getFields(): Record<string, { resolve?: (...args: never[]) => unknown }> }).getFields();
    for (const field of Object.values(fields)) {
      const resolve = field.resolve as
        | ((parent: unknown, args: unknown, context: unknown, info: unknown) => unknown)
        | undefined;
      if (!resolve || guards.has(resolve)) continue;
      const guard = (parent: unknown, args: unknown, context: unknown, info: unknown) => {
        const deadline = (context as { [DEADLINE]?: Deadline } | undefined)?.[DEADLINE];
        if (!deadline) return resolve(parent, args, context, info);
        if (deadline.passed || Date.now() >= deadline.at) {
          deadline.passed = true;
          throw (deadline.error ??= new DeadlinePassedError());
        }
        const value = resolve(parent, args, context, info);
        if (typeof (value as PromiseLike<unknown> | undefined)?.then !== "function") return value;
        return Promise.resolve(value).then((settled) => {
          if (deadline.passed || Date.now() >= deadline.at) {
            deadline.passed = true;
            throw (deadline.error ??= new DeadlinePassedError());
          }
          return settled;
        });
      };
      guards.add(guard);
      field.resolve = guard as never;
    }
  }
}

function refusedResult(error: GraphQLError, from: ExecutionResult | undefined): ExecutionResult {
  const cost = (from?.extensions as { cost?: unknown } | undefined)?.cost;
  return { errors: [error], ...(cost ? { extensions: { cost } } : {}) };
}

const timeoutError = (deadlineMs: number) =>
  new GraphQLError(
    `The query ran longer than its ${deadlineMs} ms deadline and was stopped; try again with a smaller one.`,
    {
      extensions: {
        code: "QUERY_TIMEOUT",
        limitMs: deadlineMs,
        http: { status: 503, spec: false, headers: { "retry-after": "5" } },
      },
    },
  );

/** Placed last (after the compiled-queries plugin has chosen its executor): the deadline and the answer's size. */
export function executionBounds(options: BoundsOptions): Plugin {
  const { deadlineMs, maxAnswerBytes } = options;
  const passedIn = (result: ExecutionResult): boolean =>
    (result.errors ?? []).some((e) => e.originalError instanceof DeadlinePassedError);
  return {
    onExecute({ args, executeFn, setExecuteFn, extendContext }) {
      const isQuery = getOperationAST(args.document, args.operationName ?? undefined)?.operation === "query";
      let deadline: Deadline | undefined;
      if (isQuery) {
        deadline = { at: Date.now() + deadlineMs, passed: false };
        extendContext({ [DEADLINE]: deadline } as never);
        const current = deadline;
        setExecuteFn((executionArgs) => {
          let timer: NodeJS.Timeout | undefined;
          const stopped = new Promise<ExecutionResult>((resolve) => {
            timer = setTimeout(() => {
              current.passed = true; // everything still running fails at its next step
              resolve({ errors: [timeoutError(deadlineMs)] });
            }, deadlineMs);
          });
          const ran = Promise.resolve(executeFn(executionArgs) as ExecutionResult | Promise<ExecutionResult>).finally(
            () => clearTimeout(timer),
          );
          return Promise.race([ran, stopped]);
        });
      }
      return {
        onExecuteDone({ result, setResult }) {
          if (!result || Symbol.asyncIterator in result) return;
          let single = result as ExecutionResult & { stringify?: (r: unknown) => string };
          if (deadline?.passed || passedIn(single)) {
            if (deadline) deadline.passed = true;
            single = refusedResult(timeoutError(deadlineMs), single);
            setResult(single);
            return;
          }
          const text = (single.stringify ?? JSON.stringify)(single);
          if (text.length * 3 > maxAnswerBytes && Buffer.byteLength(text) > maxAnswerBytes) {
            const error = new GraphQLError(
              `The answer is larger than ${maxAnswerBytes} bytes; ask for fewer items or fewer fields.`,
              {
                extensions: { code: "ANSWER_TOO_LARGE", limit: maxAnswerBytes, http: { status: 400, spec: false } },
              },
            );
            setResult(refusedResult(error, single));
            return;
          }
          // Serialised once, not again by Yoga; an answer with errors is serialised again by Yoga,
          // which takes their internal `http` hints out first.
          if (!single.errors?.length) setResult(Object.assign(single, { stringify: () => text }));
        },
      };
    },
  };
}
