// The domain's refusals as GraphQL objects. A field that lists these in `errors` returns the
// matching object inside its result union instead of a top-level error, so clients branch on
// `__typename` (or `... on Error { code message }`) rather than parsing messages.
import { builder } from "./builder.ts";
import { ErrorCode } from "./enums.ts";
import {
  BadInputError,
  ConflictError,
  type CrowsError,
  ForbiddenError,
  NotFoundError,
  RateLimitedError,
} from "../src/base/errors.ts";

export const ErrorInterface = builder.interfaceRef<CrowsError>("Error").implement({
  description: "An expected refusal. `code` is stable: bad_input, not_found, conflict, forbidden, rate_limited.",
  fields: (t) => ({
    message: t.exposeString("message"),
    code: t.field({ type: ErrorCode, resolve: (e) => e.code }),
  }),
});

const plain = [
  [BadInputError, "BadInputError", "Input that breaks a guardrail (REST: 400)."],
  [NotFoundError, "NotFoundError", "Something named does not exist, or nothing is waiting (REST: 404)."],
  [ConflictError, "ConflictError", "A name that is already taken (REST: 409)."],
  [ForbiddenError, "ForbiddenError", "A poster the flock will not hear, e.g. a quarantined crow (REST: 403)."],
] as const;

for (const [cls, name, description] of plain) {
  builder.objectType(cls, { name, description, interfaces: [ErrorInterface] });
}

builder.objectType(RateLimitedError, {
  name: "RateLimitedError",
  description: "The requester is in a prank cooldown (REST: 429).",
  interfaces: [ErrorInterface],
  fields: (t) => ({
    cooldownS: t.exposeInt("cooldownS", { description: "Seconds until the requester may submit again." }),
  }),
});
