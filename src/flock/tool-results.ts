// What the model reads of a tool call (docs/tools.md): a result cut to CROWS_TOOL_OUTPUT_BYTES
// and marked so, a named error, a refusal with the owner's reason, or an unknown outcome. Text in
// a result is data for the model, never an instruction to the flock.
import type { ToolCallOutcome } from "../tools/types.ts";
import type { CallEnd } from "./tool-calls.ts";

/** What the model is told of a call whose end was never recorded (it is never sent again). */
export const OUTCOME_UNKNOWN =
  "error tool_outcome_unknown: this call was started but its end was never recorded (the server stopped while it was in the air). It is not run again; its outcome is unknown.";

/** A call's end as the model reads it: the text cut to `maxBytes`, or the named error. */
export function endOf(outcome: ToolCallOutcome, maxBytes: number): CallEnd {
  if (!outcome.ok)
    return { ok: false, result: `error ${outcome.error.code}: ${outcome.error.message}`, error: outcome.error.code };
  const text = cutToBytes(outcome.text, maxBytes);
  const shown =
    text.length < outcome.text.length
      ? `${text}\n[cut: the tool gave ${Buffer.byteLength(outcome.text)} bytes; the first ${maxBytes} are shown]`
      : text;
  return outcome.isError ? { ok: false, result: `error: ${shown}`, error: "tool_error" } : { ok: true, result: shown };
}

/** The longest prefix of `text` within `maxBytes` of UTF-8, never splitting a character. */
export function cutToBytes(text: string, maxBytes: number): string {
  if (Buffer.byteLength(text) <= maxBytes) return text;
  let cut = Buffer.from(text).subarray(0, maxBytes).toString("utf8");
  if (cut.endsWith("\uFFFD")) cut = cut.slice(0, -1);
  return cut;
}

export function refusalText(status: "refused" | "timeout", reason: string | null): string {
  if (status === "timeout")
    return "error tool_refused: the owner did not approve this call in time, which counts as a refusal. It was not run; go on without it.";
  return `error tool_refused: the owner refused this call${reason ? `, saying: ${reason}` : ""}. It was not run; go on without it.`;
}
