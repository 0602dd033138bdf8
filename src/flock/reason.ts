// The owner's reason with a verdict (docs/rules.md "Reasons"): optional, plain text, at most
// MAX_REASON_CHARS characters after trimming. Absent, null or only spaces is no reason; anything
// else that is not text, or longer, is a 400 naming the limit. A reason rides with an approved or
// rejected verdict only: a timeout and an auto have nobody to give one.
import { BadInputError } from "../base/errors.ts";
import { REASON_NOT_TEXT } from "./refusals.ts";

export const MAX_REASON_CHARS = 1_000;

/** The reason as stored (trimmed), or undefined for none; BadInputError for a bad one. */
export function readReason(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw new BadInputError(REASON_NOT_TEXT);
  const reason = value.trim();
  if (reason === "") return undefined;
  // Counted in characters (code points), as the owner counts them, not UTF-16 units.
  const length = [...reason].length;
  if (length > MAX_REASON_CHARS)
    throw new BadInputError(
      `"reason" is ${length.toLocaleString("en-US")} characters; at most ${MAX_REASON_CHARS.toLocaleString("en-US")} after trimming.`,
    );
  return reason;
}

/** A verdict payload with the reason appended after every field it has (the actor included). */
export function withReason<P extends object>(payload: P, reason: string | undefined): P & { reason?: string } {
  return reason === undefined ? payload : { ...payload, reason };
}
