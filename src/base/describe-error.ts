// An error as server.log may show it: its shape, not its words (docs/operations.md, "The log").
/**
 * An error as a log line may show it: its class, code and where it was thrown, never its message
 * unless crows composed the message from numbers and settings (model call errors, system errors).
 * A message can quote the text that caused it (JSON.parse quotes its input, a provider error can
 * echo a prompt), so an unknown error keeps only its shape.
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return `non-error thrown (${typeof error})`;
  const code = (error as { code?: unknown }).code;
  const where = firstFrame(error.stack);
  const parts = [error.name];
  if (typeof code === "string" || typeof code === "number") parts.push(`code ${code}`);
  if (SAFE_MESSAGES.has(error.name) || isSystemError(error)) parts.push(error.message);
  if (where) parts.push(`at ${where}`);
  return parts.join(" ");
}

/** Errors whose messages crows composes from numbers and settings only (see their constructors). */
const SAFE_MESSAGES = new Set(["ModelCallError", "ConfigError", "StartError"]);

function isSystemError(error: Error): boolean {
  const e = error as NodeJS.ErrnoException;
  return typeof e.code === "string" && /^E[A-Z]+$/.test(e.code) && typeof e.syscall === "string";
}

function firstFrame(stack: string | undefined): string | undefined {
  const frame = stack?.split("\n").find((l) => l.trim().startsWith("at "));
  if (!frame) return undefined;
  const location = /\(?((?:file:\/\/)?[^()\s]+:\d+:\d+)\)?\s*$/.exec(frame.trim());
  if (!location) return undefined;
  const full = location[1] ?? "";
  const src = full.lastIndexOf("/src/");
  return src >= 0 ? full.slice(src + 1) : full.slice(full.lastIndexOf("/") + 1);
}
