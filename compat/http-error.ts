// One HTTP error type and one error handler for the compat API. Every refusal leaves as JSON with
// a "message" (plus "cooldown_s" on a 429), with the status EVENTS.md names; anything unexpected is
// a 500 whose body says nothing about internals.
import { CrowsError, RateLimitedError } from "../src/errors.ts";
import type { ErrorCode } from "../src/errors.ts";
import { describeError } from "../src/ops/describe-error.ts";

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

const STATUS_OF: Record<ErrorCode, number> = {
  bad_input: 400,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
};

export interface ErrorResponse {
  status: number;
  body: Record<string, unknown>;
}

export function toErrorResponse(error: unknown, log: (line: string) => void = console.error): ErrorResponse {
  if (error instanceof HttpError) return { status: error.status, body: { message: error.message, ...error.extra } };
  if (error instanceof RateLimitedError) return { status: 429, body: { message: error.message, cooldown_s: error.cooldownS } };
  if (error instanceof CrowsError) return { status: STATUS_OF[error.code], body: { message: error.message } };
  log(`compat: unexpected error: ${describeError(error)}`);
  return { status: 500, body: { message: "Internal error; nothing you sent was lost." } };
}
