// The responses a route record lists (compat/route.ts), in the document's words: a JSON answer, an
// answer without a body, and the {"message"} refusal every 4xx carries.
import type { z } from "zod";
import { ref, type Schema } from "./openapi/types.ts";
import type { ResponseSpec } from "./route.ts";

export const answer = (description: string, schema: z.ZodType | Schema, contentType?: string): ResponseSpec => ({
  description,
  schema,
  ...(contentType ? { contentType } : {}),
});

/** An answer without a body (a 204, a 202 that says nothing more). */
export const bare = (description: string): ResponseSpec => ({ description });

export const refused = (description: string): ResponseSpec => ({ description, schema: ref("Refusal") });
