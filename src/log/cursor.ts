// Where a reader resumes a stream: the SSE Last-Event-ID or a nest subscription's `after` (a list's
// ids are bare numbers; a nest's are msg_ids "<nest_id>-<n>", and the bare n is accepted too). Every
// resume point the stream never sent (malformed, another nest's, past the end) is refused with a 400
// naming the stream's last id; empty, absent or 0 is "from the start" (docs/rules.md,
// compat/SSE-PROTOCOL.md).
import { msgNumberText } from "../base/streams.ts";

export function parseCursor(raw: string | null | undefined, prefix?: string): number | "invalid" {
  if (raw === null || raw === undefined || raw.trim() === "") return 0;
  let text = raw.trim();
  if (prefix) text = msgNumberText(prefix, text);
  if (!/^\d{1,15}$/.test(text)) return "invalid";
  return Number(text);
}

export interface CursorStream {
  /** The stream's last committed seq (0 when it has none). */
  lastSeq(): Promise<number>;
  /** The id a seq goes by on the wire (a nest's msg_id); the bare number by default. */
  idOf?: (seq: number) => string;
  /** A nest's id prefix, so its msg_ids parse. */
  prefix?: string;
}

/** Where to resume: the seq to read after, or the message of the refusal (what a 400 says). */
export async function resumePoint(
  raw: string | null | undefined,
  stream: CursorStream,
  label: string,
): Promise<number | { refused: string }> {
  const parsed = parseCursor(raw, stream.prefix);
  if (parsed === 0) return 0;
  const last = await stream.lastSeq();
  if (parsed !== "invalid" && parsed <= last) return parsed;
  const idOf = stream.idOf ?? String;
  const sent = last === 0 ? "it has sent no event yet" : `its last id is ${idOf(last)}`;
  return { refused: `${label} "${String(raw).trim()}" is not an id this stream sent; ${sent}.` };
}
