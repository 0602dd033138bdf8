// Domain errors: what the engine says when it refuses. They know nothing of HTTP; the compat layer
// maps each code to the status docs/contract.md names (src/http/http-error.ts) and GraphQL turns each class
// into a member of an error union (schema/errors.ts).

/** Every refusal's stable code, one per class below. */
export const ERROR_CODES = ["bad_input", "not_found", "conflict", "forbidden", "rate_limited"] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export abstract class CrowsError extends Error {
  abstract readonly code: ErrorCode;
}

/** Input that breaks a guardrail: a 400 on the wire. */
export class BadInputError extends CrowsError {
  readonly code = "bad_input" as const;
}

/** Something named that does not exist, or nothing waiting for an answer: a 404. */
export class NotFoundError extends CrowsError {
  readonly code = "not_found" as const;
}

/** A name that is already taken: a 409. */
export class ConflictError extends CrowsError {
  readonly code = "conflict" as const;
}

/** A poster the flock will not hear (a quarantined crow): a 403. */
export class ForbiddenError extends CrowsError {
  readonly code = "forbidden" as const;
}

/** A requester in a prank cooldown: a 429 with the seconds left. */
export class RateLimitedError extends CrowsError {
  readonly code = "rate_limited" as const;
  constructor(
    message: string,
    readonly cooldownS: number,
  ) {
    super(message);
  }
}
