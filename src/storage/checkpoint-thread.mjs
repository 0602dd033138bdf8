// The WAL checkpoint thread (checkpointer.ts says why it exists). Plain JavaScript on
// better-sqlite3 alone, so the thread needs no TypeScript loader. In rounds, on a connection
// of its own:
// 1. a PASSIVE checkpoint: it copies committed pages from the -wal file into the database file
//    without SQLite's write lock, so the server's writers go on meanwhile (a round with nothing to
//    copy reads the WAL index and syncs nothing); rounds come every 10 ms while the WAL grows, and
//    back off to `everyMs` when it does not;
// 2. when the WAL holds SQLite's threshold (1,000 pages) or more, a checkpoint while holding the
//    file's writer lock (writer-lock.ts), so no frame is added meanwhile: every frame is then
//    copied, and the next write starts the WAL over from its beginning. Without it a server that
//    never stops writing grows the -wal file for ever (a copy beside the writers always leaves the
//    frames written during it). The flock's writes wait for that copy (the back-pressure SQLite's
//    own checkpoints give), never with its event loop stopped; after a step-1 round it copies only
//    what came meanwhile, and a WAL found that large at the last look is copied under the lock at once.
// The writer lock (writer-lock.ts has its words): the thread asks for the next turn (word 2), so
// the server's next take waits for it, then takes the lock, blocking this thread while it waits
// (nothing else runs here), and frees it as WriterLock.release does.
import { parentPort, workerData } from "node:worker_threads";
import Database from "better-sqlite3";

const { file, everyMs, writerLock, holder, restartPages } = workerData;
const FREE = 0;
/** The shortest gap between rounds, while the WAL keeps growing. */
const BURST_GAP_MS = 10;
const word = writerLock ? new Int32Array(writerLock, 0, 3) : undefined;
let db;
try {
  db = new Database(file, { fileMustExist: true });
  db.pragma("busy_timeout = 0");
} catch (error) {
  parentPort.postMessage({ kind: "failed", reason: String(error?.message ?? error) });
  process.exit(1);
}
let timer;
let stopping = false;
let current = Promise.resolve();
let lastError = "";
let last = "";

const checkpoint = () => db.pragma("wal_checkpoint(PASSIVE)")[0];

function underWriterLock(run) {
  Atomics.compareExchange(word, 2, 0, holder); // the next turn is ours (unless another asked first)
  for (;;) {
    const seen = Atomics.compareExchange(word, 0, FREE, holder);
    if (seen === FREE) break;
    Atomics.add(word, 1, 1);
    Atomics.wait(word, 0, seen, 5);
    Atomics.sub(word, 1, 1);
  }
  if (Atomics.compareExchange(word, 2, holder, 0) === holder) Atomics.notify(word, 2);
  try {
    return { ...run(), locked: true };
  } finally {
    Atomics.store(word, 0, FREE);
    if (Atomics.load(word, 1) > 0) Atomics.notify(word, 0);
  }
}

/** Frames the WAL held at the last look: a large WAL is copied under the writer lock at once. */
let lastLog = 0;

/** The gap before the next round: short while writes come, doubling up to everyMs once they stop. */
let gap = BURST_GAP_MS;

async function round() {
  let grew = false;
  try {
    // A WAL at the threshold or more is copied with the writer lock held from the start: the
    // server's writes then wait for the copy (the back-pressure SQLite's own checkpoints give),
    // so a server writing faster than the copies go cannot grow the WAL without bound.
    let row = word && lastLog >= restartPages ? underWriterLock(checkpoint) : checkpoint();
    if (word && !row.locked && row.log >= restartPages) row = underWriterLock(checkpoint);
    lastLog = row.checkpointed === row.log ? 0 : row.log;
    grew = row.log > 0 && `${row.log}/${row.checkpointed}` !== last;
    lastError = "";
    const seen = `${row.log}/${row.checkpointed}`;
    if (row.checkpointed > 0 && seen !== last)
      parentPort.postMessage({
        kind: "round",
        log: row.log,
        checkpointed: row.checkpointed,
        restarted: row.locked === true && row.checkpointed === row.log,
      }); // told only when it moved
    last = seen;
  } catch (error) {
    const message = String(error?.message ?? error);
    if (message !== lastError) parentPort.postMessage({ kind: "error", message }); // once per new trouble
    lastError = message;
  }
  // While writes come the rounds follow each other every BURST_GAP_MS, so the WAL holds what that
  // adds (a server writing flat out adds ~1,000 pages in it here); an idle server is looked at
  // every everyMs.
  gap = grew ? BURST_GAP_MS : Math.min(everyMs, gap * 2);
  if (!stopping) timer = setTimeout(() => (current = round()), gap);
}

parentPort.on("message", async (message) => {
  if (message !== "stop") return;
  stopping = true;
  clearTimeout(timer);
  await current; // a round under way finishes (and frees the writer lock) first
  db.close();
  parentPort.postMessage({ kind: "stopped" });
  parentPort.close();
});
parentPort.postMessage({ kind: "started" });
current = round();
