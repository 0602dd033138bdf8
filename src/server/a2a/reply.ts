// A caller's reply to input-required (docs/integrations.md "A2A"): its first word is the verdict
// (approve / yes, or reject / no) and the rest of its text, if any, the owner's reason, e.g.
// "reject: it costs too much"; a reason in the message's metadata (`reason`) wins. The reason is
// handed to the engine as REST's is: its bound and trimming are the engine's (src/flock/reason.ts).
// A batch reply (a data part holding `decisions`) decides several of the approvals an input-required
// names at once (docs/integrations.md "A2A").
import type { Message } from "@a2a-js/sdk";
import { MAX_DECISIONS } from "../agents/decide-each.ts";

export interface Reply {
  approve: boolean;
  /** As given: the engine trims it, bounds it, drops it if empty, and refuses what is not text. */
  reason?: string | null;
}

const APPROVE = ["approve", "approved", "yes", "y", "ok"];
const REJECT = ["reject", "rejected", "no", "n"];

/** The reply's verdict and reason, or undefined when its first word is no verdict. */
export function readReply(text: string, metadata: Record<string, unknown> | undefined): Reply | undefined {
  const match = /^\s*([A-Za-z]+)[\s.,:;!-]*([\s\S]*)$/.exec(text);
  const word = match?.[1]?.toLowerCase() ?? "";
  const approve = APPROVE.includes(word) ? true : REJECT.includes(word) ? false : undefined;
  if (approve === undefined) return undefined;
  const rest = match?.[2] ?? "";
  // Not checked here: the engine refuses a reason that is not text, as it does REST's.
  const reason = (metadata?.reason !== undefined ? metadata.reason : rest) as string | null;
  return { approve, reason };
}

/** One decision of a batch reply, as the caller wrote it (checked by `decideAll`, src/server/a2a/decisions.ts). */
export type BatchEntry = Record<string, unknown>;

/** A batch refused whole, before any of it is decided: why, in words for the caller. */
export interface BatchRefused {
  refused: string;
}

/**
 * A batch reply's decisions: the `decisions` array of the message's first data part that has one
 * (`{"decisions": [{"item_id", "target"?, "approve", "reason"?}, ...]}`), or undefined for a
 * message without one (a text reply). An entry that is not an object is kept, to be refused by name.
 * A `decisions` that is no list, or a list longer than MAX_DECISIONS, is refused whole.
 */
export function readBatch(message: Message): BatchEntry[] | BatchRefused | undefined {
  for (const part of message.parts) {
    if (part.content?.$case !== "data") continue;
    const value = part.content.value as { decisions?: unknown } | null;
    if (!value || typeof value !== "object" || !("decisions" in value)) continue;
    if (!Array.isArray(value.decisions))
      return { refused: '"decisions" must be a list of {"item_id", "target"?, "approve", "reason"?}.' };
    if (value.decisions.length > MAX_DECISIONS)
      return {
        refused: `A reply decides at most ${MAX_DECISIONS} approvals; this one holds ${value.decisions.length.toLocaleString("en-US")}.`,
      };
    return value.decisions.map((d: unknown) =>
      d && typeof d === "object" && !Array.isArray(d) ? (d as BatchEntry) : {},
    );
  }
  return undefined;
}
