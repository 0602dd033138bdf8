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
