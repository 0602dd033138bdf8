// Queries run as graphql-jit compiled functions, cached per parsed document (Yoga's parser cache
// bounds how many): a ledger or a list's events is thousands of fields, and graphql-js resolving
// each through its generic executor was most of a read's CPU (compiled: 1.6-1.9x the reads/s, docs/performance.md).
//
// Only documents that carry no string literal are compiled. graphql-jit writes a field's literal
// arguments into the generated code as JSON, then rewrites any string that starts with its
// (public) date marker into `new Date(<the rest of the string>)`: a query such as
// `{ trust(holder: "__MAGIC_DATE__33a9...globalThis.x=1") { holder } }` ran code on the server
// (graphql-jit 0.8.7, found here; test/security-graphql.test.ts keeps it out). Strings that
// arrive as variables are data at run time and never reach generated code; numbers, booleans and
// enum names are bounded by the GraphQL grammar. So a query with a string literal, and every
// mutation and subscription (a few fields each; graphql-js's subscribe also answers a refused
// `after` before the stream opens), runs on graphql-js as before.
import { BREAK, getOperationAST, visit, type DocumentNode } from "graphql";
import { useGraphQlJit } from "@envelop/graphql-jit";

const stringLiteralIn = new WeakMap<DocumentNode, boolean>();

export function carriesStringLiteral(document: DocumentNode): boolean {
  let found = stringLiteralIn.get(document);
  if (found === undefined) {
    found = false;
    visit(document, {
      StringValue() {
        found = true;
        return BREAK;
      },
    });
    stringLiteralIn.set(document, found);
  }
  return found;
}

export const compiledQueries = useGraphQlJit(
  {},
  {
    enableIf: (args) =>
      getOperationAST(args.document, args.operationName ?? undefined)?.operation === "query" &&
      !carriesStringLiteral(args.document),
  },
);
