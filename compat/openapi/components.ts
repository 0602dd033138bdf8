// The shared shapes of the REST answers (docs/contract.md payloads, docs/rules.md), named once.
import type { Schema } from "./types.ts";
import { VERDICTS } from "../../src/flock/events.ts";
import { LEVEL_NAMES } from "../../src/flock/trust.ts";
import { KINDS, TAGGED_BY } from "../../src/nests/message.ts";

const str = { type: "string" } as const;
const int = { type: "integer" } as const;
const level = { type: "integer", minimum: 0, maximum: 2, description: "0 stranger, 1 regular, 2 trusted." } as const;
const verdict = { type: "string", enum: [...VERDICTS] } as const;
const at = { type: "string", format: "date-time" } as const;

const object = (properties: Record<string, Schema>, extra: Schema = {}): Schema => ({
  type: "object",
  required: Object.keys(properties),
  properties,
  ...extra,
});

/** `schema` with properties that may be absent (not in its required list). */
const withOptional = (schema: Schema, optional: Record<string, Schema>): Schema => ({
  ...schema,
  properties: { ...(schema.properties as Record<string, Schema>), ...optional },
});

export const schemas: Record<string, Schema> = {
  Refusal: object({ message: str }, { description: "Every 4xx answer: a sentence saying what was refused and why." }),
  RateLimited: object(
    { message: str, cooldown_s: { type: "integer", minimum: 1 } },
    { description: "A 429: the poster is in a cooldown." },
  ),
  ListAccepted: object({ list_id: str }),
  TrustLedger: object({ ledger: { type: "array", items: { $ref: "#/components/schemas/TrustRecord" } } }),
  TrustRecord: object({
    holder: { ...str, description: "A crow, a spun crow, flock or Sentry." },
    task_type: str,
    level,
    level_name: { type: "string", enum: [...LEVEL_NAMES] },
    streak: int,
    approvals: int,
    rejections: int,
    autos: int,
    history: {
      type: "array",
      maxItems: 20,
      description: "The record's newest 20 entries, oldest first.",
      items: { $ref: "#/components/schemas/TrustEntry" },
    },
    history_total: {
      ...int,
      description: "How many entries the record has; the rest page through /api/trust/history.",
    },
  }),
  TrustEntry: object({
    id: int,
    verdict,
    subject: { ...str, description: "The item (or ask) judged." },
    from: level,
    to: level,
    at,
  }),
  TrustHistoryPage: object({
    history: { type: "array", items: { $ref: "#/components/schemas/TrustHistoryRow" } },
    next_before: {
      type: ["integer", "null"],
      description: "Pass as before for the page before; null on the oldest page.",
    },
  }),
  TrustHistoryRow: withOptional(
    object({
      id: int,
      holder: str,
      task_type: str,
      verdict,
      subject: str,
      from: level,
      to: level,
      at,
      actor: {
        anyOf: [{ $ref: "#/components/schemas/Actor" }, { type: "null" }],
        description:
          "Who decided the verdict (for the Sentry's record: who replied to its ask); null on entries older than deciders on the ledger.",
      },
    }),
    { reason: { type: "string", description: "The reason the decider gave; absent when none was given." } },
  ),
  Nest: object({ nest_id: str, name: str, crows: { type: "array", items: str } }),
  Nests: object({
    roster: { type: "array", items: str, description: "The 8 working crows." },
    nests: { type: "array", items: { $ref: "#/components/schemas/Nest" } },
  }),
  MessageRecord: withOptional(
    object({
      msg_id: { ...str, description: "<nest_id>-<n>, numbered from 1 in nest order." },
      kind: { type: "string", enum: [...KINDS] },
      author: str,
      text: str,
      to: str,
      refers_to: str,
      tagged_by: { type: "string", enum: [...TAGGED_BY] },
      mode: { type: "string", enum: ["", "solo", "conspiracy", "split"] },
      mode_tagged_by: str,
      invited: int,
      approval_phrase: str,
      resolved: { type: "string", enum: ["", "approved", "rejected"] },
    }),
    {
      reason: { ...str, description: "The owner's reason with a reply to an ask: only when one was given, last." },
    },
  ),
  Persona: object({ name: str, epithet: str, strength: str, backstory: str }),
  SpunCrows: object({
    crows: {
      type: "array",
      items: object({ name: str, persona: str, trust: { type: "string", enum: ["stranger", "regular"] } }),
    },
  }),
};
