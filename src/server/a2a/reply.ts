// A caller's reply to input-required (docs/integrations.md "A2A"): its first word is the verdict
// (approve / yes, or reject / no) and the rest of its text, if any, the owner's reason, e.g.
// "reject: it costs too much"; a reason in the message's metadata (`reason`) wins. The reason is
// handed to the engine as REST's is: its bound and trimming are the engine's (src/flock/reason.ts).

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
