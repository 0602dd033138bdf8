// One HTTP error type and one error handler, for every path the server answers (the compat API,
// the access check, request parsing). Every refusal leaves as JSON with a "message" (plus
// "cooldown_s" on a 429, with Retry-After saying the same), with the status docs/contract.md names;
// storage trouble is a 503 with Retry-After that says the storage is failing; anything unexpected
// is a 500 whose body says nothing about internals.
import { CrowsError, RateLimitedError } from "../base/errors.ts";
import type { ErrorCode } from "../base/errors.ts";
import { describeError } from "../base/describe-error.ts";
import { RETRY_AFTER_S, storageTroubleOf, TROUBLE_MESSAGE } from "../storage/trouble.ts";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
    /** Response headers the refusal needs (Allow, WWW-Authenticate, Connection: close). */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The status each domain refusal answers with, on REST and GraphQL alike. */
export const STATUS_OF: Record<ErrorCode, number> = {
  bad_input: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
};

export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
  headers: Record<string, string>;
}

export function toErrorResponse(error: unknown, log: (line: string) => void = console.error): ErrorResponse {
  if (error instanceof HttpError)
    return { status: error.status, body: { message: error.message, ...error.extra }, headers: error.headers };
  if (error instanceof RateLimitedError) {
    return {
      status: 429,
      body: { message: error.message, cooldown_s: error.cooldownS },
      headers: { "retry-after": String(error.cooldownS) },
    };
  }
  if (error instanceof CrowsError)
    return { status: STATUS_OF[error.code], body: { message: error.message }, headers: {} };
  // The client went away before anything was stored: nobody reads this answer, and it is no fault.
  if (error instanceof Error && error.name === "AbortError")
    return {
      status: 503,
      body: { message: "The request was abandoned before anything was stored." },
      headers: { "retry-after": "1" },
    };
  // Storage that fails (full, read-only, I/O errors, a database that does not answer) is not a bug:
  // a 503 the client may retry, saying so (src/storage/trouble.ts).
  const trouble = storageTroubleOf(error);
  if (trouble !== undefined) {
    return {
      status: 503,
      body: { message: TROUBLE_MESSAGE[trouble], storage: trouble },
      headers: { "retry-after": String(RETRY_AFTER_S[trouble]) },
    };
  }
  log(`compat: unexpected error: ${describeError(error)}`);
  return { status: 500, body: { message: "Internal error; nothing you sent was lost." }, headers: {} };
}

/** The part of a node response the writers below use. */
interface JsonTarget {
  writeHead(status: number, headers: Record<string, string>): { end(body?: string): unknown };
}

/**
 * The one JSON response writer: the body's text with its UTF-8 length, then `headers`. With
 * `omitBody` (a HEAD) the headers still say what a GET would get.
 */
export function sendJson(
  res: JsonTarget,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
  omitBody = false,
): void {
  const text = JSON.stringify(body);
  res
    .writeHead(status, {
      "content-type": "application/json; charset=utf-8",
      "content-length": String(Buffer.byteLength(text)),
      ...headers,
    })
    .end(omitBody ? undefined : text);
}

/** The one place an error becomes bytes on a node response (or is dropped when it is too late). */
export function sendError(
  res: JsonTarget & { headersSent: boolean; writableEnded: boolean },
  error: unknown,
  log?: (line: string) => void,
): void {
  if (res.headersSent || res.writableEnded) return;
  const { status, body, headers } = toErrorResponse(error, log);
  sendJson(res, status, body, headers);
}
