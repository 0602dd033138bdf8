// How deep a JSON text nests, measured on the text itself with one loop and no recursion, before
// JSON.parse or anything else walks it: every later reader (our scans, Yoga, graphql-js's variable
// coercion, Prisma's JSON) recurses, and about 3,000 levels overflowed one of them as a 500. Past
// MAX_JSON_DEPTH a REST body, a GraphQL body (query, variables used or unused, an unknown extra
// field) and a GraphQL GET's `variables` / `extensions` are a 400 naming the limit.
import { HttpError } from "./http-error.ts";

/** Arrays and objects inside one another: `{"a":[1]}` is 2 deep. docs/security.md states it. */
export const MAX_JSON_DEPTH = 64;

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The deepest nesting of arrays and objects in `text` (0 for a scalar), counted up to `stopAt`
 * (the scan stops there: nothing beyond it matters). Brackets inside strings are skipped. The text
 * need not be valid JSON: broken JSON is JSON.parse's to refuse.
 */
export function jsonDepth(text: string, stopAt = Number.MAX_SAFE_INTEGER): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
      continue;
    }
    if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > deepest) {
        deepest = depth;
        if (deepest >= stopAt) return deepest;
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return deepest;
}

export function tooDeep(text: string, max = MAX_JSON_DEPTH): boolean {
  return jsonDepth(text, max + 1) > max;
}

/** The 400 for JSON nested past the limit; `where` says which part ("The body", "The \"variables\" parameter"). */
export function tooDeepError(where: string): HttpError {
  return new HttpError(400, `${where} nests arrays and objects more than ${MAX_JSON_DEPTH} deep; send flatter JSON.`, {
    limit_depth: MAX_JSON_DEPTH,
  });
}

/** Refuses JSON text nested past MAX_JSON_DEPTH with the 400 above. */
export function refuseTooDeep(text: string, where: string): void {
  if (tooDeep(text)) throw tooDeepError(where);
}
