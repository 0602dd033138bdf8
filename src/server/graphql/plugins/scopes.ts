// The scope each GraphQL operation needs (docs/security.md "Scopes"), checked on every transport
// (/graphql, Yoga's SSE, /graphql/stream) before anything runs: queries and subscriptions need
// read (the token list needs admin), each mutation the scope of its root field. A refusal is a
// 403 coded "forbidden" whose message names the missing scope. postMessage passes with write or
// decide, and its resolver tells an ask reply from other posts.
import { GraphQLError, Kind, getOperationAST, type DocumentNode, type SelectionSetNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import type { Principal } from "../../../access/principal.ts";
import { missingScopeMessage, type Scope } from "../../../access/scopes.ts";

const MUTATION_SCOPES: Record<string, Scope | "post"> = {
  submitList: "write",
  cancelList: "write",
  createNest: "write",
  spinCrow: "write",
  postMessage: "post",
  postVerdict: "decide",
  createToken: "admin",
  revokeToken: "admin",
  addWebhook: "admin",
  removeWebhook: "admin",
  rotateWebhookSecret: "admin",
  redeliverWebhook: "admin",
  recoverWebhook: "admin",
};
const ADMIN_QUERIES = new Set(["tokens", "webhooks", "webhookDeliveries"]);

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
  principal: Principal,
  document: DocumentNode,
  operationName: string | undefined,
): Scope | undefined {
  const operation = getOperationAST(document, operationName);
  if (!operation) return undefined; // graphql itself refuses it
  const has = (scope: Scope) => principal.scopes.includes(scope);
  for (const field of rootFields(document, operation.selectionSet)) {
    if (field.startsWith("__")) continue;
    let needed: Scope | "post";
    if (operation.operation === "mutation")
      needed = MUTATION_SCOPES[field] ?? "admin"; // a new mutation is locked until listed
    else needed = ADMIN_QUERIES.has(field) ? "admin" : "read";
    if (needed === "post") {
      if (!has("write") && !has("decide")) return "write";
    } else if (!has(needed)) return needed;
  }
  if (
    operation.operation !== "mutation" &&
    !has("read") &&
    rootFields(document, operation.selectionSet).every((f) => f.startsWith("__"))
  )
    return "read";
  return undefined;
}

const forbidden = (scope: Scope) =>
  new GraphQLError(missingScopeMessage(scope), { extensions: { code: "forbidden", scope, http: { status: 403 } } });

export const graphqlScopes: Plugin<{ principal?: Principal }> = {
  onExecute({ args, setResultAndStopExecution }) {
    const principal = (args.contextValue as { principal?: Principal }).principal;
    const scope = principal && missingScope(principal, args.document, args.operationName ?? undefined);
    // graphql-sse only recognizes a result that has a data key
    if (scope) setResultAndStopExecution({ data: null, errors: [forbidden(scope)] });
  },
  onSubscribe({ args, setResultAndStopExecution }) {
    const principal = (args.contextValue as { principal?: Principal }).principal;
    const scope = principal && missingScope(principal, args.document, args.operationName ?? undefined);
    // No data key: refused before it streams, a 403 on both SSE transports.
    if (scope) setResultAndStopExecution({ errors: [forbidden(scope)] });
  },
};
