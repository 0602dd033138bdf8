// Why a server cannot start, as one line a person can act on: no stack trace, the cause named
// (a taken port with its number, a busy folder with its holder, a data folder crows will not use,
// a bad host, a bad setting). `crows serve` exits 3 with it, and writes it to start-error.json.
import { ConfigError } from "../base/config.ts";

export type StartErrorCode =
  | "config"
  | "port_taken"
  | "bad_host"
  | "folder_busy"
  | "data_dir"
  | "data_dir_lost"
  | "database"
  | "redis"
  | "failed";

export class StartError extends Error {
  constructor(
    readonly code: StartErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "StartError";
  }
}

/** Turns whatever stopped a start into a StartError whose message is one line. */
export function toStartError(error: unknown, where: { host: string; port: number }): StartError {
  if (error instanceof StartError) return error;
  if (error instanceof ConfigError) return new StartError("config", error.message);
  const code = (error as NodeJS.ErrnoException)?.code;
  if (code === "EADDRINUSE")
    return new StartError(
      "port_taken",
      `port ${where.port} on ${where.host} is taken by another program; set CROWS_PORT to a free port`,
    );
  if (code === "EACCES" && (error as { syscall?: string }).syscall === "listen") {
    return new StartError(
      "port_taken",
      `port ${where.port} needs privileges this account lacks; set CROWS_PORT above 1023`,
    );
  }
  if (
    code === "EADDRNOTAVAIL" ||
    code === "ENOTFOUND" ||
    code === "EAI_AGAIN" ||
    code === "EAI_FAIL" ||
    code === "EAI_NONAME" ||
    code === "EINVAL"
  ) {
    return new StartError(
      "bad_host",
      `CROWS_HOST ${JSON.stringify(where.host)} is not an address this machine can listen on`,
    );
  }
  const message = firstLine((error as Error)?.message ?? String(error));
  if (/database|sqlite|prisma|migration|ECONNREFUSED|P\d{4}/i.test(message)) {
    return new StartError("database", `the database could not be opened: ${message.slice(0, 200)}`);
  }
  return new StartError("failed", `the server could not start: ${message.slice(0, 200)}`);
}

function firstLine(text: string): string {
  return (text.split("\n").find((l) => l.trim() !== "") ?? "").trim();
}
