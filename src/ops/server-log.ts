// server.log: one line per event, `<ISO time> <text>`, in the data folder. Rotated at 5 MB with 3
// files kept (server.log, server.log.1, server.log.2). Lines say what happened and to which id,
// never what anyone wrote: no item or message text, no answers, prompts or keys (docs/operations.md).
// As a last guard, any configured secret that still reaches a line is replaced, and a line is cut
// to one physical line and at most 2,000 characters.
import { appendFileSync, renameSync, rmSync, statSync } from "node:fs";

export const LOG_MAX_BYTES = 5 * 1024 * 1024;
export const LOG_FILES_KEPT = 3;
const MAX_LINE = 2000;

export interface ServerLog {
  readonly path: string;
  line(text: string): void;
}

export interface ServerLogOptions {
  maxBytes?: number;
  /** Values that must never appear in the log (API keys, tokens). */
  secrets?: Array<string | undefined>;
  /** Also hand each finished line here (stderr when `crows serve` runs in the foreground). */
  echo?: (line: string) => void;
}

export function createServerLog(file: string, options: ServerLogOptions = {}): ServerLog {
  const maxBytes = options.maxBytes ?? LOG_MAX_BYTES;
  const secrets = (options.secrets ?? []).filter((s): s is string => typeof s === "string" && s.length >= 4);
  let size = sizeOf(file);
  return {
    path: file,
    line(text: string) {
      let clean = text.replace(/\s*[\r\n]+\s*/g, " | ");
      for (const secret of secrets) clean = clean.split(secret).join("[redacted]");
      if (clean.length > MAX_LINE) clean = `${clean.slice(0, MAX_LINE)}…`;
      const line = `${new Date().toISOString()} ${clean}\n`;
      options.echo?.(line.trimEnd());
      try {
        if (size > 0 && size + Buffer.byteLength(line) > maxBytes) {
          rotate(file);
          size = 0;
        }
        appendFileSync(file, line, { mode: 0o600 });
        size += Buffer.byteLength(line);
      } catch {
        // A full disk must not take the server down with it; the echo (stderr) still has the line.
      }
    },
  };
}

function rotate(file: string): void {
  rmSync(`${file}.${LOG_FILES_KEPT - 1}`, { force: true });
  for (let n = LOG_FILES_KEPT - 2; n >= 1; n--) {
    try {
      renameSync(`${file}.${n}`, `${file}.${n + 1}`);
    } catch {
      // not there yet
    }
  }
  renameSync(file, `${file}.1`);
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

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
