// Reading a route's query parameters: a bad one is a 400 naming it and what it may be, never a
// silent default (a client that asked for page 2 must not be handed page 1).
import { HttpError } from "../src/http/http-error.ts";

/** A whole number from `min` to `max`, or undefined when the parameter is absent (or empty). */
export function intParam(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = textParam(query, name);
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw)) throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}.`);
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max)
    throw new HttpError(400, `${name} must be a whole number from ${min} to ${max}.`);
  return value;
}

/** A non-empty text parameter, or undefined when absent; given twice is a 400. */
export function textParam(query: URLSearchParams, name: string): string | undefined {
  const all = query.getAll(name);
  if (all.length > 1) throw new HttpError(400, `${name} may be given once.`);
  const raw = all[0];
  if (raw === undefined || raw === "") return undefined;
  return raw;
}
