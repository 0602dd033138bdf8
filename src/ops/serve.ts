// `crows serve`: the server in the foreground, what `npm start` and a supervisor run. In order:
// the data folder rules, the lock (before the database is touched, so a second server refuses in
// well under a second instead of fighting over the file), the app, the listener; then server.json
// and one JSON line on stdout. A start that fails writes start-error.json, prints one JSON line on
// stderr and exits 3. SIGTERM/SIGINT stop gracefully: stop accepting, answer what is in flight,
// close streams, finish writes, record "stopped", release the lock, exit 0.
import net from "node:net";
import { readSettings, type Config } from "../base/config.ts";
import type { App } from "../app.ts";
import type { RunningServer } from "../server/http.ts";
import { prepareDataDir } from "../storage/data-dir.ts";
import { acquireLock, type HeldLock } from "./lock.ts";
import { dataDirFromEnv, dataFiles, type DataFiles } from "./paths.ts";
import { clearStartError, updateServerState, writeServerState, writeStartError, type ServerState } from "./state.ts";
import { createServerLog, type ServerLog } from "./server-log.ts";
import { describeError } from "../base/describe-error.ts";
import { toStartError } from "../storage/start-error.ts";
import { crowsVersion } from "./version.ts";
import { sameProcessAlive, startTickOf } from "./processes.ts";
import { readServerState } from "./state.ts";
import { watchDataFolder } from "./folder-watch.ts";
import { StartError } from "../storage/start-error.ts";
import path from "node:path";

import { EXIT } from "./exit.ts";

type Env = Record<string, string | undefined>;

export async function serve(env: Env = process.env): Promise<void> {
  let files: DataFiles = dataFiles(dataDirFromEnv(env));
  let config: Config | undefined;
  let log: ServerLog | undefined;
  let lock: HeldLock | undefined;
  let app: App | undefined;
  let server: RunningServer | undefined;
  // A signal during the start (a supervisor stopping a slow start) is kept and acted on once the
  // server is up, so the stop is still graceful and the lock is released.
  let signalledEarly: string | undefined;
  // Printed only once every handler is on: whoever reads it may signal at once.
  let readyLine = "";
  const early = (signal: NodeJS.Signals) => (signalledEarly ??= signal);
  process.on("SIGTERM", early);
  process.on("SIGINT", early);
  try {
    const settings = readSettings(env);
    config = settings.config;
    files = dataFiles(config.dataDir);
    const folder = prepareDataDir(config.dataDir);
    // Lines go to stderr too once the server is live (a supervisor's journal); before that, a
    // failed start keeps stderr to its one JSON line.
    let echo = false;
    log = createServerLog(files.log, {
      secrets: [
        config.modelApiKey,
        config.openaiApiKey,
        config.anthropicApiKey,
        config.jevApiKey,
        config.token,
        ...config.readTokens,
      ],
      echo: (line) => echo && process.stderr.write(`${line}\n`),
    });
    // A stderr nobody reads any more (a supervisor or a pipe that went away) must not end the
    // server at its next log line (EPIPE, uncaught): the lines go on into server.log alone.
    const serverLog = log;
    process.stderr.on("error", (error) => {
      if (!echo) return;
      echo = false;
      serverLog.line(
        `log: stderr cannot be written (${(error as NodeJS.ErrnoException).code ?? describeError(error)}); lines go to ${files.log} only`,
      );
    });
    log.line(
      `start: crows ${crowsVersion()} pid ${process.pid}, data folder ${folder.dir} (${folder.created ? "created" : "existing"})`,
    );
    lock = acquireLock(files);
    await refuseBesideLiveServer(files);
    log.line("start: lock taken");
    const ended = previousEnd(files);
    if (ended) log.line(ended);
    const restartReason = config.restartReason?.slice(0, 200);
    if (restartReason) log.line(`start: restart requested: ${restartReason}`);
    await tryListen(config.host, config.port); // a taken port or a bad host fails now, not after migrations
    // Loaded after the lock: a second server refuses before it loads (or touches) the database.
    const [{ createApp }, { startServer }, { createMetrics }] = await Promise.all([
      import("../app.ts"),
      import("../server/http.ts"),
      import("../telemetry/metrics.ts"),
    ]);
    app = await createApp(config, { logLine: log.line, metrics: createMetrics({ processMetrics: true }) });
    log.line("start: database open, migrations applied, flock resumed");
    server = await startServer(app);
    const state: ServerState = {
      pid: process.pid,
      tick: startTickOf(process.pid),
      started: lock.record.started,
      port: server.port,
      url: server.url,
      version: crowsVersion(),
      data_dir: files.dir,
      log: files.log,
      stopped: false,
      last_error: null,
      ...(restartReason ? { restart_reason: restartReason } : {}),
    };
    writeServerState(files, state);
    clearStartError(files);
    log.line(`listening on ${server.url}`);
    echo = true;
    // An old setting name still read: one line each, in server.log and on stderr, naming the new
    // name and the value converted (docs/configuration.md "Old names").
    for (const warning of settings.warnings) log.line(`config: ${warning}`);
    const { pid, url, started, version, data_dir } = state;
    readyLine = JSON.stringify({ state: "live", url, pid, started, version, data_dir, log: files.log }) + "\n";
  } catch (error) {
    const failure = toStartError(error, {
      host: config?.host ?? env.CROWS_HOST ?? "127.0.0.1",
      port: config?.port ?? Number(env.CROWS_PORT ?? 7717),
    });
    log?.line(`start failed: ${failure.code}: ${failure.message}`);
    try {
      writeStartError(files, {
        code: failure.code,
        message: failure.message,
        at: new Date().toISOString(),
        pid: process.pid,
      });
    } catch {
      // the data folder itself is the problem (not a folder, not writable): stderr still says why
    }
    // Best effort on the way out: the start failure above is what the owner needs to read, and a
    // half-started server or app failing to close says nothing more.
    await server?.close().catch(() => {});
    await app?.close().catch(() => {});
    lock?.release();
    process.stderr.write(JSON.stringify({ error: failure.code, message: failure.message }) + "\n");
    process.exit(EXIT.cannotRun);
  }
  // The stop handlers go on before the early ones come off: with no SIGTERM listener for a moment,
  // a signal already received but not yet dispatched is dropped (a stop sent right after the ready
  // line was lost that way).
  watchForStop(
    { files, log: log!, lock: lock!, app: app!, server: server!, databaseFile: sqliteFile(config!.databaseUrl) },
    signalledEarly,
  );
  process.off("SIGTERM", early);
  process.off("SIGINT", early);
  process.stdout.write(readyLine);
}

function sqliteFile(url: string): string | undefined {
  return url.startsWith("file:") && url !== "file::memory:" ? path.resolve(url.slice("file:".length)) : undefined;
}

/**
 * The lock can be gone while its server lives (removed by hand, or the folder replaced): the last
 * server.json then still names a live pid, or a server answers on its port with that pid.
 */
async function refuseBesideLiveServer(files: DataFiles): Promise<void> {
  const state = readServerState(files);
  if (!state || state.stopped || state.pid === process.pid) return;
  let answers = false;
  try {
    const response = await fetch(`${state.url}/healthz`, { signal: AbortSignal.timeout(1_000) });
    const body = (await response.json().catch(() => ({}))) as { pid?: unknown };
    answers = response.status === 401 || body.pid === state.pid;
  } catch {
    answers = false;
  }
  if (answers || sameProcessAlive(state.pid, state.tick)) {
    throw new StartError(
      "folder_busy",
      `the data folder ${files.dir} is in use by crows pid ${state.pid} at ${state.url} (its lock file is missing); stop it first (crows stop) or choose another CROWS_DATA_DIR`,
    );
  }
}

const FATAL_SIGNALS: NodeJS.Signals[] = ["SIGHUP", "SIGQUIT", "SIGUSR2", "SIGXCPU", "SIGXFSZ"];

/** The last server of this folder ended without stopping (killed, crashed, a fatal signal): say so. */
function previousEnd(files: DataFiles): string | undefined {
  const state = readServerState(files);
  if (!state || state.stopped || sameProcessAlive(state.pid, state.tick)) return undefined;
  return `start: the previous server (pid ${state.pid}, started ${state.started}) ended without stopping${state.last_error ? `; its last error: ${state.last_error}` : " and recorded no error (killed, or a fatal signal such as SIGBUS or SIGSEGV no handler can catch)"}`;
}

/** Binds and releases the address the server will listen on, so its errors come first and fast. */
function tryListen(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once("error", reject);
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve()));
  });
}

function watchForStop(
  s: {
    files: DataFiles;
    log: ServerLog;
    lock: HeldLock;
    app: App;
    server: RunningServer;
    databaseFile: string | undefined;
  },
  signalledEarly?: string,
): void {
  let stopping = false;
  // The folder gone or replaced: refuse writes and fail /readyz at once, answer what is in flight,
  // then exit 3 with a start error saying what happened (in start-error.json when a folder is there).
  const folderLost = async (why: string, how: "lost" | "unwritable") => {
    if (stopping) return;
    stopping = true;
    s.app.database.health.fence(
      how === "lost" ? "folder_lost" : "read_only",
      `${why}; this server refuses writes and is stopping`,
    );
    s.log.line(`error: ${why}; refusing writes, stopping`);
    await Promise.race([s.server.close(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]).catch(
      () => {},
    );
    const failure = new StartError(
      "data_dir_lost",
      `${why}; the server stopped. Check the folder, then start again (crows up)`,
    );
    try {
      writeStartError(s.files, {
        code: failure.code,
        message: failure.message,
        at: new Date().toISOString(),
        pid: process.pid,
      });
    } catch {
      // the folder is gone: stderr says it
    }
    process.stderr.write(JSON.stringify({ error: failure.code, message: failure.message }) + "\n");
    s.lock.release();
    process.exit(EXIT.cannotRun);
  };
  watchDataFolder(
    [
      { what: "data folder", path: s.files.dir },
      { what: "lock", path: s.files.lock },
      ...(s.databaseFile
        ? [
            { what: "database", path: s.databaseFile },
            { what: "database's shared-memory file", path: `${s.databaseFile}-shm`, mustBeWritable: true },
            { what: "database's write-ahead log", path: `${s.databaseFile}-wal`, mustBeWritable: true },
          ]
        : []),
    ],
    (why, how) => void folderLost(why, how),
  );
  const stop = async (why: string) => {
    if (stopping) {
      s.log.line(`stop: ${why} again; exiting without waiting`);
      s.lock.release();
      process.exit(EXIT.failed);
    }
    stopping = true;
    s.log.line(`stop: ${why}; answering requests in flight, finishing writes`);
    try {
      await s.server.close();
      await s.app.close();
      updateServerState(s.files, { stopped: true, stopped_at: new Date().toISOString() });
      s.log.line("stopped");
      s.lock.release();
      process.exit(EXIT.done);
    } catch (error) {
      fail(`stop failed: ${describeError(error)}`);
    }
  };
  const fail = (line: string) => {
    s.log.line(line);
    try {
      updateServerState(s.files, { last_error: line });
    } catch {
      // nothing more to do
    }
    s.lock.release();
    process.exit(EXIT.failed);
  };
  process.on("SIGTERM", () => void stop("SIGTERM received"));
  process.on("SIGINT", () => void stop("SIGINT received"));
  // Signals that end a process unless handled: the last line says which one ended it. (SIGBUS,
  // SIGSEGV and SIGKILL cannot run a handler; the next start reports that end instead.)
  for (const signal of FATAL_SIGNALS) process.on(signal, () => fail(`error: ${signal} received; exiting`));
  process.on("uncaughtException", (error) => fail(`error: uncaught ${describeError(error)}`));
  process.on("unhandledRejection", (error) => fail(`error: unhandled rejection ${describeError(error)}`));
  if (signalledEarly) void stop(`${signalledEarly} received while starting`);
}
