// The data folder rules (docs/operations.md, "The data folder"):
// - a missing folder is created 700, and the process umask is 077, so every file crows writes
//   there (the database and its -wal/-shm, the server files) is 600;
// - crows never changes the mode of a folder it did not create: it refuses one that is a link, is
//   not a folder, belongs to another account, lets others read or write it, or that it cannot write;
// - crows' own files left 644 by an older version are tightened to 600 (only those names: the
//   folder may hold the owner's other files).
import { accessSync, chmodSync, constants, lstatSync, mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { StartError } from "./start-error.ts";

/** The files crows writes in its data folder; the only ones it ever changes the mode of. */
const OWN_FILE =
  /^(crows\.db(-wal|-shm|-journal)?|instance-id|server\.(lock(\.takeover)?|json|log(\.\d+)?)|server\.(lock|json)\.\d+\.tmp|start-error\.json)$/;

export interface PreparedDataDir {
  dir: string;
  created: boolean;
}

export function prepareDataDir(dataDir: string): PreparedDataDir {
  process.umask(0o077);
  const dir = path.resolve(dataDir);
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT")
      throw refuse(dir, `cannot be read (${(error as NodeJS.ErrnoException).code})`);
    try {
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (mkdirError) {
      throw refuse(dir, `cannot be created (${(mkdirError as NodeJS.ErrnoException).code ?? "error"})`);
    }
    chmodSync(dir, 0o700); // ours: created just now
    return { dir, created: true };
  }
  if (stat.isSymbolicLink()) throw refuse(dir, "is a link; point CROWS_DATA_DIR at the real folder");
  if (!stat.isDirectory()) throw refuse(dir, "is not a folder");
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid)
    throw refuse(dir, `belongs to another account (uid ${stat.uid}, this is uid ${uid})`);
  if ((stat.mode & 0o066) !== 0) {
    const mode = (stat.mode & 0o777).toString(8);
    throw refuse(
      dir,
      `can be read or written by others (mode ${mode}); run chmod 700 on it or choose another CROWS_DATA_DIR`,
    );
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch {
    throw refuse(dir, "is not writable by this account");
  }
  tightenOwnFiles(dir);
  return { dir, created: false };
}

function tightenOwnFiles(dir: string): void {
  for (const name of readdirSync(dir)) {
    if (!OWN_FILE.test(name)) continue;
    const file = path.join(dir, name);
    try {
      const stat = lstatSync(file);
      if (stat.isFile() && (stat.mode & 0o077) !== 0) chmodSync(file, 0o600);
    } catch {
      // gone or not ours to change: leave it
    }
  }
}

function refuse(dir: string, why: string): StartError {
  return new StartError("data_dir", `the data folder ${dir} ${why}`);
}
