// Text no store can keep as sent is refused at the door, before anything runs: a NUL (PostgreSQL's
// text type cannot hold one: the write failed as a 500) and a lone UTF-16 surrogate (it has no
// UTF-8 form: SQLite would store U+FFFD, not what was sent), anywhere in a REST body, a REST path
// or query, a GraphQL variable or a string written in the document; and a body that is not UTF-8
// at all (decoding would swap the bad bytes for U+FFFD without a word). Each is a 400 with a
// message that names where. Unusual but valid text (RTL marks, combining marks, emoji) is kept.
import { GraphQLError, Kind, visit, type DocumentNode } from "graphql";
import type { Plugin } from "graphql-yoga";
import { HttpError } from "./http-error.ts";

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be stored, or undefined when it can. */
export function unstorable(text: string): string | undefined {
  const found = UNSTORABLE.exec(text);
  if (!found) return undefined;
  return found[0] === "\u0000" ? "a NUL character" : "a lone UTF-16 surrogate (half of a pair)";
}

/**
 * Where in a parsed JSON value the first unstorable string sits ("text", "crows[1]"), and why. One
 * loop over an explicit stack, in document order: a value nested thousands deep (a GraphQL variable
 * parsed by Yoga) cannot overflow the call stack here.
 */
export function findUnstorable(value: unknown, at = ""): { at: string; why: string } | undefined {
  const stack: Array<{ value: unknown; at: string; isKey?: boolean }> = [{ value, at }];
  while (stack.length > 0) {
    const next = stack.pop()!;
    if (typeof next.value === "string") {
      const why = unstorable(next.value);
      if (why) return { at: next.at || (next.isKey ? "a key" : "the value"), why };
      continue;
    }
    const children: Array<{ value: unknown; at: string; isKey?: boolean }> = [];
    if (Array.isArray(next.value)) {
      next.value.forEach((item, i) => {
        children.push({ value: item, at: `${next.at}[${i}]` });
      });
    } else if (next.value !== null && typeof next.value === "object") {
      for (const [key, item] of Object.entries(next.value)) {
        children.push({ value: key, at: next.at ? `${next.at} key` : "", isKey: true });
        children.push({ value: item, at: next.at ? `${next.at}.${key}` : key });
      }
    }
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return undefined;
}

export const refusalMessage = (found: { at: string; why: string }) =>
  `${JSON.stringify(found.at)} holds ${found.why}, which cannot be stored; send text without it.`;

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** A body as text; a 400 when it is not valid UTF-8. */
export function decodeBody(body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw new HttpError(400, "The body is not valid UTF-8.");
  }
}

/** The same check for a REST body, path or query: a 400 HttpError. */
export function refuseUnstorable(value: unknown, at?: string): void {
  const found = findUnstorable(value, at);
  if (found) throw new HttpError(400, refusalMessage(found));
}

function literalIn(document: DocumentNode): { at: string; why: string } | undefined {
  let found: { at: string; why: string } | undefined;
  visit(document, {
    [Kind.STRING]: (node) => {
      const why = unstorable(node.value);
      if (why && !found) found = { at: `the string at line ${node.loc?.startToken.line ?? "?"}`, why };
    },
  });
  return found;
}

/** GraphQL: variables and the document's own strings, checked before an operation executes or subscribes. */
export const refuseUnstorableText: Plugin = (() => {
  const check = (document: DocumentNode, variables: unknown): GraphQLError | undefined => {
    const found = findUnstorable(variables ?? {}, "") ?? literalIn(document);
    if (!found) return undefined;
    const at = found.at.startsWith("the string") ? found : { ...found, at: `$${found.at}` };
    return new GraphQLError(refusalMessage(at), { extensions: { code: "bad_input", http: { status: 400 } } });
  };
  return {
    onExecute({ args, setResultAndStopExecution }) {
      const error = check(args.document, args.variableValues);
      if (error) setResultAndStopExecution({ data: null, errors: [error] });
    },
    onSubscribe({ args, setResultAndStopExecution }) {
      const error = check(args.document, args.variableValues);
      if (error) setResultAndStopExecution({ errors: [error] });
    },
  };
})();
