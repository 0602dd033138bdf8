// The role output formats as code: zod schemas and parsers for the replies other code acts on
// (the Sentry's triage, Quill's relay, Boss's orders). Real models wrap JSON in ``` fences or add
// a stray sentence, so the parsers tolerate that; anything that still does not validate comes back
// as { ok: false } / { kind: "invalid" } with a short reason, and the caller falls back.
import { z } from "zod";
import { TASK_TYPES } from "../base/roster.ts";
import { TRIAGE_MODES } from "../base/triage.ts";

const oneLine = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .refine((value) => !/[\r\n]/.test(value), "must be one line");

const nonEmptyText = z.string().trim().min(1, "must not be empty");

export const TriageSchema = z
  .object({
    mode: z.enum(TRIAGE_MODES),
    task_type: z.enum(TASK_TYPES),
    subtasks: z.array(nonEmptyText),
    reason: oneLine,
  })
  .superRefine((triage, context) => {
    const count = triage.subtasks.length;
    if (triage.mode === "split" && (count < 2 || count > 4)) {
      context.addIssue({ code: "custom", path: ["subtasks"], message: `a split needs 2-4 subtasks, got ${count}` });
    }
    if (triage.mode !== "split" && count !== 0) {
      context.addIssue({
        code: "custom",
        path: ["subtasks"],
        message: `must be empty for ${triage.mode}, got ${count}`,
      });
    }
  });

export type TriageReply = z.infer<typeof TriageSchema>;

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

/** Drops a ``` or ```json fence around a reply. */
export function stripFence(text: string): string {
  const trimmed = text.trim();
  const fenced = /^```[a-zA-Z]*\s*\n?([\s\S]*?)\n?\s*```$/.exec(trimmed);
  return (fenced ? fenced[1]! : trimmed).trim();
}

/** The JSON object in a reply: the whole reply, or the span from its first "{" to its last "}". */
function jsonObjectIn(text: string): unknown {
  const body = stripFence(text);
  try {
    return JSON.parse(body);
  } catch {
    const start = body.indexOf("{");
    const end = body.lastIndexOf("}");
    if (start < 0 || end <= start) throw new Error("no JSON object");
    return JSON.parse(body.slice(start, end + 1));
  }
}

function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => (issue.path.length > 0 ? `${issue.path.join(".")}: ${issue.message}` : issue.message))
    .join("; ");
}

function validate<T>(schema: z.ZodType<T>, value: unknown): Parsed<T> {
  const result = schema.safeParse(value);
  return result.success ? { ok: true, value: result.data } : { ok: false, error: describeIssues(result.error) };
}

export function parseTriage(text: string): Parsed<TriageReply> {
  let value: unknown;
  try {
    value = jsonObjectIn(text);
  } catch {
    return { ok: false, error: "the Sentry's reply is not a JSON object" };
  }
  return validate(TriageSchema, value);
}

// Quill: RELAY {"to","text"} | SAY <text> | a plain answer.

const RelaySchema = z.object({ to: nonEmptyText, text: nonEmptyText });

export type QuillReply =
  | { kind: "relay"; to: string; text: string }
  | { kind: "say"; text: string }
  | { kind: "answer"; text: string }
  | { kind: "invalid"; error: string };

/** "KEYWORD {json}" or "KEYWORD: {json}", fences tolerated; upper case only, so a plain answer
 * that happens to begin "Say ..." is not mistaken for an order. */
function ordered(text: string, keyword: string): { matched: false } | { matched: true; rest: string } {
  const body = stripFence(text)
    .replace(/^`+|`+$/g, "")
    .trim();
  const match = new RegExp(`^${keyword}\\b\\s*:?\\s*`).exec(body);
  return match ? { matched: true, rest: body.slice(match[0].length).trim() } : { matched: false };
}

function orderPayload<T>(rest: string, schema: z.ZodType<T>, keyword: string): Parsed<T> {
  let value: unknown;
  try {
    value = jsonObjectIn(rest);
  } catch {
    return { ok: false, error: `${keyword} is not followed by a JSON object` };
  }
  const result = validate(schema, value);
  return result.ok ? result : { ok: false, error: `${keyword}: ${result.error}` };
}

export function parseQuill(text: string): QuillReply {
  const relay = ordered(text, "RELAY");
  if (relay.matched) {
    const payload = orderPayload(relay.rest, RelaySchema, "RELAY");
    return payload.ok
      ? { kind: "relay", to: payload.value.to, text: payload.value.text }
      : { kind: "invalid", error: payload.error };
  }
  const say = ordered(text, "SAY");
  if (say.matched) {
    return say.rest.length > 0 ? { kind: "say", text: say.rest } : { kind: "invalid", error: "SAY has no text" };
  }
  const answer = text.trim();
  return answer.length > 0 ? { kind: "answer", text: answer } : { kind: "invalid", error: "Quill's reply is empty" };
}

// Boss: SPIN {"name","persona","trust"} | NEST {"name","crows"} | a plain reply. Whether the name
// is free, the persona known, the cap reached or the crows real is the harness's guardrail, not
// the parser's: it refuses with the reason, so those checks are not repeated here. Trust "trusted"
// is accepted so the harness can clamp it to regular, as the contract says.

export const SpinSchema = z.object({
  name: nonEmptyText.pipe(z.string().max(40, "must be at most 40 characters")),
  persona: nonEmptyText.default("Corvina"),
  trust: z.enum(["stranger", "regular", "trusted"]).default("stranger"),
});

export const NestSchema = z.object({
  name: nonEmptyText.pipe(z.string().max(40, "must be at most 40 characters")),
  crows: z.array(nonEmptyText).min(1, "must name at least one crow"),
});

export type BossReply =
  | { kind: "spin"; name: string; persona: string; trust: "stranger" | "regular" | "trusted" }
  | { kind: "nest"; name: string; crows: string[] }
  | { kind: "reply"; text: string }
  | { kind: "invalid"; error: string };

export function parseBoss(text: string): BossReply {
  const spin = ordered(text, "SPIN");
  if (spin.matched) {
    const payload = orderPayload(spin.rest, SpinSchema, "SPIN");
    return payload.ok ? { kind: "spin", ...payload.value } : { kind: "invalid", error: payload.error };
  }
  const nest = ordered(text, "NEST");
  if (nest.matched) {
    const payload = orderPayload(nest.rest, NestSchema, "NEST");
    return payload.ok ? { kind: "nest", ...payload.value } : { kind: "invalid", error: payload.error };
  }
  const reply = text.trim();
  return reply.length > 0 ? { kind: "reply", text: reply } : { kind: "invalid", error: "Boss's reply is empty" };
}
