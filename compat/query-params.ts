// A route's query parameters as zod schemas over every value the query gave for the name: a bad
// one is a 400 naming it and what it may be, never a silent default (a client that asked for page
// 2 must not be handed page 1). Given twice is a 400; an empty value counts as absent.
import { z } from "zod";

/** At most one value; "" is absent. */
const once = (name: string) =>
  z
    .array(z.string())
    .refine((all) => all.length <= 1, { error: `${name} may be given once.`, abort: true })
    .transform((all) => (all[0] === "" ? undefined : all[0]));

/** A non-empty text parameter, or undefined when absent. */
export const textQuery = (name: string, description: string) =>
  once(name).pipe(z.string().optional()).describe(description);

/** A whole number from `min` to `max`, or undefined when absent. */
export function intQuery(name: string, min: number, max: number, description: string) {
  const words = `${name} must be a whole number from ${min} to ${max}.`;
  const whole = z.string().regex(/^\d+$/, words).transform(Number).pipe(z.int(words).min(min, words).max(max, words));
  return once(name).pipe(whole.optional()).describe(description);
}

/**
 * A parameter the handler (or the engine) reads itself, from the raw query: its documented shape
 * only (a route's `handlerQuery`).
 */
export const described = (schema: z.ZodType, description: string) =>
  z
    .array(z.string())
    .transform(() => undefined)
    .pipe(schema.optional() as z.ZodType<unknown, undefined>)
    .describe(description);
