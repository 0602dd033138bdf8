// The scope each GraphQL operation needs (docs/security.md "Scopes"), checked on every transport
// (/graphql, Yoga's SSE, /graphql/stream) before anything runs. Each root field declares its scopes
// itself (`authScopes` in schema/*.ts, schema/scopes.ts): queries and subscriptions read (the
// token and webhook lists admin), each mutation its own. A root field that declares none is locked
// (admin) until it does. A refusal is a 403 coded "forbidden" whose message names the missing
// scope. postMessage passes with write or decide, and its resolver tells an ask reply from other posts.
import { Kind, getOperationAST, type DocumentNode, type GraphQLSchema, type SelectionSetNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Principal } from "../../../access/principal.ts";
import type { Scope } from "../../../access/scopes.ts";
import { declaredScopes, scopeRefusal } from "../../../../schema/scopes.ts";

/** Root field names of the operation, through fragments. */
function rootFields(document: DocumentNode, selectionSet: SelectionSetNode, seen = new Set<string>()): string[] {
  const names: string[] = [];
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) names.push(selection.name.value);
    else if (selection.kind === Kind.INLINE_FRAGMENT) names.push(...rootFields(document, selection.selectionSet, seen));
    else if (!seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = document.definitions.find(
        (d) => d.kind === Kind.FRAGMENT_DEFINITION && d.name.value === selection.name.value,
      );
      if (fragment && fragment.kind === Kind.FRAGMENT_DEFINITION)
        names.push(...rootFields(document, fragment.selectionSet, seen));
    }
  }
  return names;
}

/** The first scope the operation needs that the principal lacks, or undefined. */
export function missingScope(
  schema: GraphQLSchema,
  principal: Principal,
  document: DocumentNode,
  operationName: string | undefined,
): Scope | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined; // graphql itself refuses it
  const rootType = schema.getRootType(operation.operation);
  const has = (scope: Scope) => principal.scopes.includes(scope);
  const fields = rootFields(document, operation.selectionSet);
  for (const name of fields) {
    if (name.startsWith("__")) continue;
    const field = rootType?.getFields()[name];
    if (!field) continue; // graphql itself refuses an unknown field
    const needed = declaredScopes(field) ?? ["admin"];
    if (!needed.some(has)) return needed[0];
  }
  if (operation.operation !== "mutation" && !has("read") && fields.every((f) => f.startsWith("__"))) return "read";
  return undefined;
}

export const graphqlScopes: Plugin<{ principal?: Principal }> = {
  onExecute({ args, setResultAndStopExecution }) {
    const principal = (args.contextValue as { principal?: Principal }).principal;
    const scope = principal && missingScope(args.schema, principal, args.document, args.operationName ?? undefined);
    // graphql-sse only recognizes a result that has a data key
    if (scope) setResultAndStopExecution({ data: null, errors: [scopeRefusal(scope)] });
  },
  onSubscribe({ args, setResultAndStopExecution }) {
    const principal = (args.contextValue as { principal?: Principal }).principal;
    const scope = principal && missingScope(args.schema, principal, args.document, args.operationName ?? undefined);
    // No data key: refused before it streams, a 403 on both SSE transports.
    if (scope) setResultAndStopExecution({ errors: [scopeRefusal(scope)] });
  },
};
