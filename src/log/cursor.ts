// Where a reader resumes a stream: the SSE Last-Event-ID or a subscription's `after`. A list's ids
// are bare numbers; a nest's are msg_ids ("<nest_id>-<n>"), and the bare n is accepted too.
export function parseCursor(raw: string | null | undefined, prefix?: string): number | "invalid" {
  if (raw === null || raw === undefined || raw.trim() === "") return 0;
  let text = raw.trim();
  if (prefix && text.startsWith(`${prefix}-`)) text = text.slice(prefix.length + 1);
  if (!/^\d{1,15}$/.test(text)) return "invalid";
  return Number(text);
}
