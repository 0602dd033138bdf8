// Which errors count as storage trouble (src/storage/trouble.ts), over the shapes they arrive in:
// better-sqlite3's SqliteError, node's errno errors, pg's DatabaseError, Prisma's driver-adapter
// wrapping, pg-pool's plain messages; and that other errors, however worded, do not count. Then
// the mapping a client sees: 503 + Retry-After, the kind, a message that says storage is failing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { storageTroubleOf, StorageTroubleError } from "../../src/storage/trouble.ts";
import { toErrorResponse } from "../../src/http/http-error.ts";
import { BadInputError, NotFoundError } from "../../src/base/errors.ts";

function coded(code: string, message = "x"): Error {
  return Object.assign(new Error(message), { code });
}
function prismaWrapped(cause: Record<string, unknown>): Error {
  return Object.assign(new Error("Invalid `prisma.todoList.create()` invocation"), {
    code: "P2010",
    meta: { driverAdapterError: Object.assign(new Error("DriverAdapterError"), { cause }) },
  });
}

const CASES: Array<[string, unknown, string | undefined]> = [
  ["SqliteError SQLITE_FULL", coded("SQLITE_FULL", "database or disk is full"), "disk_full"],
  ["ENOSPC", coded("ENOSPC", "no space left on device"), "disk_full"],
  ["EDQUOT", coded("EDQUOT"), "disk_full"],
  ["pg 53100", coded("53100", "could not extend file"), "disk_full"],
  [
    "prisma sqlite extendedCode 13",
    prismaWrapped({ kind: "sqlite", extendedCode: 13, message: "database or disk is full" }),
    "disk_full",
  ],
  ["SQLITE_READONLY", coded("SQLITE_READONLY", "attempt to write a readonly database"), "read_only"],
  ["SQLITE_READONLY_DBMOVED", coded("SQLITE_READONLY_DBMOVED"), "read_only"],
  ["EROFS", coded("EROFS", "read-only file system"), "read_only"],
  [
    "prisma sqlite extendedCode 1032 (READONLY_DBMOVED)",
    prismaWrapped({ kind: "sqlite", extendedCode: 1032, message: "m" }),
    "read_only",
  ],
  ["SQLITE_IOERR_WRITE", coded("SQLITE_IOERR_WRITE", "disk I/O error"), "io_error"],
  ["SQLITE_CORRUPT", coded("SQLITE_CORRUPT", "database disk image is malformed"), "io_error"],
  ["EIO", coded("EIO"), "io_error"],
  [
    "prisma sqlite extendedCode 266 (IOERR_READ)",
    prismaWrapped({ kind: "sqlite", extendedCode: 266, message: "m" }),
    "io_error",
  ],
  [
    "pg 57P01 admin shutdown",
    coded("57P01", "terminating connection due to administrator command"),
    "database_unavailable",
  ],
  [
    "pg 57014 statement timeout",
    coded("57014", "canceling statement due to statement timeout"),
    "database_unavailable",
  ],
  ["pg 25P03 idle in transaction", coded("25P03"), "database_unavailable"],
  ["pg 08006", coded("08006"), "database_unavailable"],
  ["pool connect timeout", new Error("timeout exceeded when trying to connect"), "database_unavailable"],
  ["client read timeout", new Error("Query read timeout"), "database_unavailable"],
  ["connection terminated", new Error("Connection terminated unexpectedly"), "database_unavailable"],
  ["ECONNREFUSED", coded("ECONNREFUSED", "connect ECONNREFUSED 127.0.0.1:5432"), "database_unavailable"],
  ["prisma P1001", coded("P1001", "Can't reach database server"), "database_unavailable"],
  [
    "prisma adapter DatabaseNotReachable",
    prismaWrapped({ kind: "DatabaseNotReachable", host: "h" }),
    "database_unavailable",
  ],
  ["prisma adapter SocketTimeout (SQLITE_BUSY)", prismaWrapped({ kind: "SocketTimeout" }), "database_unavailable"],
  ["a fenced folder", new StorageTroubleError("folder_lost"), "folder_lost"],
  ["a cause chain", Object.assign(new Error("outer"), { cause: coded("ENOSPC") }), "disk_full"],
  // Not storage trouble, whatever the words:
  ["a bad input", new BadInputError("the disk is full of crows"), undefined],
  ["not found", new NotFoundError("No nest full."), undefined],
  ["a TypeError", new TypeError("Cannot read properties of undefined (reading 'full')"), undefined],
  ["a unique violation", prismaWrapped({ kind: "UniqueConstraintViolation", constraint: {} }), undefined],
  [
    "prisma sqlite constraint (19)",
    prismaWrapped({ kind: "sqlite", extendedCode: 19, message: "constraint failed" }),
    undefined,
  ],
  ["pg syntax error 42601", coded("42601", "syntax error at or near"), undefined],
  ["a string", "database or disk is full", undefined],
  ["null", null, undefined],
];

test("storage trouble is recognised in every shape it arrives in, and nothing else is", () => {
  for (const [name, error, kind] of CASES) assert.is(storageTroubleOf(error), kind, name);
});

test("a client gets 503 + Retry-After and a message saying storage is failing; other errors keep their status", () => {
  for (const [name, error, kind] of CASES) {
    const response = toErrorResponse(error, () => {});
    if (kind === undefined) {
      assert.is.not(response.status, 503, name);
      continue;
    }
    assert.is(response.status, 503, name);
    assert.ok(Number(response.headers["retry-after"]) > 0, name);
    assert.is(response.body.storage, kind, name);
    assert.match(String(response.body.message), /^Storage is failing/, name);
  }
});

test.run();
