// Storage trouble, named: an error from the database or the disk that says the storage is failing
// (full, read-only, I/O errors, a database that does not answer in time or lost its connection)
// rather than that the request or the code is wrong. The HTTP mapping turns it into a 503 with
// Retry-After and GraphQL into a coded error; the health tracker (storage-health.ts) turns /readyz
// 503 while it lasts. docs/operations.md "Failure modes" lists what each looks like from outside.

export type StorageTroubleKind = "disk_full" | "read_only" | "io_error" | "database_unavailable" | "folder_lost";

/** Thrown when the storage is known to be failing before anything is tried (a fenced data folder). */
export class StorageTroubleError extends Error {
  constructor(
    readonly kind: StorageTroubleKind,
    message: string = TROUBLE_MESSAGE[kind],
  ) {
    super(message);
    this.name = "StorageTroubleError";
  }
}

/** What a client reads: the storage is failing, nothing it sent was kept half-way, try again later. */
export const TROUBLE_MESSAGE: Record<StorageTroubleKind, string> = {
  disk_full: "Storage is failing: the disk is full. Nothing from this request was stored; try again later.",
  read_only:
    "Storage is failing: the database cannot be written (read-only). Nothing from this request was stored; try again later.",
  io_error: "Storage is failing: the disk reports I/O errors. Nothing from this request was stored; try again later.",
  database_unavailable: "Storage is failing: the database did not answer in time. Try again in a moment.",
  folder_lost:
    "Storage is failing: the data folder was removed or replaced under this server, which is stopping. Nothing from this request was stored.",
};

/** Seconds a client is told to wait (Retry-After) for each kind. */
export const RETRY_AFTER_S: Record<StorageTroubleKind, number> = {
  disk_full: 30,
  read_only: 30,
  io_error: 30,
  database_unavailable: 5,
  folder_lost: 10,
};

// SQLite result codes (by name, as better-sqlite3 reports them), errno names, PostgreSQL SQLSTATEs,
// Prisma's driver-adapter kinds and its connection error codes, and the messages pg and Prisma use.
const RULES: Array<[StorageTroubleKind, RegExp]> = [
  ["disk_full", /^(SQLITE_FULL|ENOSPC|EDQUOT|53100)$/],
  ["read_only", /^(SQLITE_READONLY\w*|EROFS|25006)$/],
  ["io_error", /^(SQLITE_IOERR\w*|SQLITE_CORRUPT\w*|SQLITE_NOTADB|SQLITE_CANTOPEN\w*|EIO|58030|XX001|XX002)$/],
  [
    "database_unavailable",
    /^(SQLITE_BUSY\w*|SocketTimeout|DatabaseNotReachable|ConnectionClosed|TooManyConnections|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|57P0[1-5]|57014|25P03|08\w{3}|53300|P1001|P1002|P1008|P1017|P2024|P2028)$/,
  ],
];
const MESSAGES: Array<[StorageTroubleKind, RegExp]> = [
  ["disk_full", /database or disk is full|no space left on device|could not extend file/i],
  ["read_only", /attempt to write a readonly database|read-only file system|read-only transaction/i],
  ["io_error", /disk i\/o error|database disk image is malformed|input\/output error/i],
  [
    "database_unavailable",
    /connection terminated|timeout exceeded when trying to connect|query read timeout|statement timeout|idle-in-transaction timeout|terminating connection|the database system is (starting up|shutting down|in recovery mode)|can't reach database server|connection (refused|reset)|server closed the connection|unable to start a transaction in the given time|transaction already closed|database is locked|client has encountered a connection error/i,
  ],
];

/** The kind of storage trouble an error shows, looking through its causes; undefined for any other error. */
export function storageTroubleOf(error: unknown): StorageTroubleKind | undefined {
  if (error instanceof StorageTroubleError) return error.kind;
  const codes: string[] = [];
  const messages: string[] = [];
  const sqliteCodes: number[] = [];
  collect(error, codes, messages, sqliteCodes, 0, new Set());
  for (const [kind, rule] of RULES) if (codes.some((c) => rule.test(c))) return kind;
  for (const code of sqliteCodes) {
    const kind = SQLITE_PRIMARY[code & 0xff];
    if (kind) return kind;
  }
  for (const [kind, rule] of MESSAGES) if (messages.some((m) => rule.test(m))) return kind;
  return undefined;
}

// Prisma wraps a driver error (DriverAdapterError.cause, meta.driverAdapterError, originalError):
// walk a few levels of plain fields rather than name each wrapper.
const NESTED = ["cause", "meta", "driverAdapterError", "originalError", "error", "errors"];

// Prisma's SQLite adapter reports a driver error as {kind: "sqlite", extendedCode}: the primary
// result code is its low byte.
const SQLITE_PRIMARY: Record<number, StorageTroubleKind> = {
  5: "database_unavailable",
  8: "read_only",
  10: "io_error",
  11: "io_error",
  13: "disk_full",
  14: "io_error",
  26: "io_error",
};

function collect(
  value: unknown,
  codes: string[],
  messages: string[],
  sqliteCodes: number[],
  depth: number,
  seen: Set<unknown>,
): void {
  if (value === null || typeof value !== "object" || depth > 6 || seen.has(value)) return;
  seen.add(value);
  const record = value as Record<string, unknown>;
  for (const key of ["code", "kind", "errorCode"]) {
    const field = record[key];
    if (typeof field === "string") codes.push(field);
  }
  if (typeof record.message === "string") messages.push(record.message);
  if (record.kind === "sqlite" && typeof record.extendedCode === "number") sqliteCodes.push(record.extendedCode);
  for (const key of NESTED) {
    const inner = record[key];
    if (Array.isArray(inner))
      inner.slice(0, 4).forEach((item) => {
        collect(item, codes, messages, sqliteCodes, depth + 1, seen);
      });
    else collect(inner, codes, messages, sqliteCodes, depth + 1, seen);
  }
}
