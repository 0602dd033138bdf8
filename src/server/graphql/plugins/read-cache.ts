// Serves a read query's answer again, as the same JSON text, while the database has not changed.
// Why: a full trust ledger or a list's 300 events is thousands of fields; resolving and
// serialising them cost several times Yoga's own per-request work, on every request, although the
// answer only changes when something commits. The database's version (src/storage/read-version.ts,
// ~3 us to ask) is read before the query runs and again after: an answer is kept only if it was
// unchanged throughout, and served only while it is still the same, so a read that follows a
// commit (a verdict, an appended event) always runs afresh. No version (PostgreSQL, a Prisma
// transaction open): nothing is cached, every query runs.
//
// Only queries whose every root field is in CACHEABLE_ROOTS: their answers depend on nothing but
// the database (no clock, no process memory, no caller), so the same query, variables and version
// give the same answer to everyone. Answers with errors are never kept.
import type { DocumentNode, ExecutionResult, OperationDefinitionNode } from "graphql";
import { getOperationAST } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { ReadVersion } from "../../../storage/read-version.ts";

/** Root fields answered from the database alone (everything under them too: lists, items, approvals, events). */
const CACHEABLE_ROOTS: ReadonlySet<string> = new Set(["trust", "list", "events", "__typename"]);

/** How many answers, and how much JSON text in all, are kept (least recently used go first). */
const MAX_ENTRIES = 64;
const MAX_TOTAL_CHARS = 8 * 1024 * 1024;

interface Kept {
  version: string;
  text: string;
}

/**
 * Is every root selection a plain field in CACHEABLE_ROOTS (no fragments, no directives), and one
 * of them more than `__typename` (which costs less to answer than to look up)?
 */
function cacheableOperation(operation: OperationDefinitionNode | null | undefined): boolean {
  if (!operation || operation.operation !== "query") return false;
  const roots = operation.selectionSet.selections;
  return (
    roots.every((s) => s.kind === "Field" && CACHEABLE_ROOTS.has(s.name.value) && (s.directives?.length ?? 0) === 0) &&
    roots.some((s) => s.kind === "Field" && s.name.value !== "__typename")
  );
}

/**
 * A result Yoga sends as `text` itself (it serialises with a result's own `stringify`, as it does
 * for graphql-jit's), whose `data` is parsed only if something else reads it (graphql-sse).
 */
function keptResult(text: string): ExecutionResult & { stringify: () => string } {
  let data: ExecutionResult["data"];
  return {
    get data() {
      data ??= (JSON.parse(text) as ExecutionResult).data;
      return data;
    },
    stringify: () => text,
  };
}

export function graphqlReadCache(versionOf: () => ReadVersion): Plugin {
  const cacheable = new WeakMap<DocumentNode, Map<string, boolean>>();
  const kept = new Map<string, Kept>();
  const keys = new WeakMap<DocumentNode, number>();
  let documents = 0;
  let totalChars = 0;

  const isCacheable = (document: DocumentNode, operationName: string | undefined): boolean => {
    let byName = cacheable.get(document);
    if (!byName) cacheable.set(document, (byName = new Map()));
    let answer = byName.get(operationName ?? "");
    if (answer === undefined)
      byName.set(operationName ?? "", (answer = cacheableOperation(getOperationAST(document, operationName))));
    return answer;
  };

  const keep = (key: string, entry: Kept) => {
    const old = kept.get(key);
    if (old) {
      kept.delete(key);
      totalChars -= old.text.length;
    }
    if (entry.text.length > MAX_TOTAL_CHARS / 4) return;
    kept.set(key, entry);
    totalChars += entry.text.length;
    for (const [oldest, value] of kept) {
      if (kept.size <= MAX_ENTRIES && totalChars <= MAX_TOTAL_CHARS) break;
      kept.delete(oldest);
      totalChars -= value.text.length;
    }
  };

  return {
    onExecute({ args, setResultAndStopExecution }) {
      const operationName = args.operationName ?? undefined;
      if (!isCacheable(args.document, operationName)) return;
      const version = versionOf().current();
      if (version === null) return;
      // Parsed documents are cached by Yoga, so the same query text is the same document object.
      let id = keys.get(args.document);
      if (id === undefined) keys.set(args.document, (id = ++documents));
      const key = `${id}\u0000${operationName ?? ""}\u0000${JSON.stringify(args.variableValues ?? {})}`;
      const hit = kept.get(key);
      if (hit && hit.version === version) {
        kept.delete(key); // most recently used last
        kept.set(key, hit);
        setResultAndStopExecution(keptResult(hit.text));
        return;
      }
      return {
        onExecuteDone({ result, setResult }) {
          const single = result as ExecutionResult & { stringify?: (r: unknown) => string };
          // extensions.cost is kept with the text: it follows from the query and variables, the key.
          const onlyCost = !single?.extensions || Object.keys(single.extensions).every((k) => k === "cost");
          if (!single || Symbol.asyncIterator in single || single.errors || !onlyCost || !("data" in single)) return;
          if (versionOf().current() !== version) return; // something committed (or began) meanwhile
          const text = (single.stringify ?? JSON.stringify)(single);
          keep(key, { version, text });
          setResult(Object.assign(single, { stringify: () => text })); // serialised once, not again by Yoga
        },
      };
    },
  };
}
