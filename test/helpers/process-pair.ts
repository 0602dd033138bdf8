// Two real server processes on one fresh PostgreSQL database and the Redis bus, a short lease and a
// fake model provider, as the fencing tests run them (docs/rules.md "One owner's story"): A runs
// the list and is killed -9 or frozen with SIGSTOP past its lease; B takes the list over. Kept in
// one place so every fencing test starts the pair, and cleans it up, the same way.
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { FakeOpenAI } from "./fake-openai.ts";
import { crash, startServerProcess, type ServerProcess } from "./process.ts";
import { eventually, freshDatabase, type Services } from "./scale-services.ts";

export interface ProcessPair {
  a: ServerProcess & { url: string };
  b: ServerProcess & { url: string };
  dbUrl: string;
  /** Thaws A (a test may leave it frozen), kills both, closes the provider, drops the database. */
  done(): Promise<void>;
}

export interface PairOptions {
  /** The prefix of the two data folders' names, so a leftover folder says which test left it. */
  dirPrefix: string;
  leaseMs: number;
  /** More settings for both instances. */
  env?: Record<string, string>;
}

export async function processPair(svc: Services, fake: FakeOpenAI, options: PairOptions): Promise<ProcessPair> {
  const db = await freshDatabase(svc.pgUrl);
  const dirs = [
    mkdtempSync(path.join(os.tmpdir(), `${options.dirPrefix}-a-`)),
    mkdtempSync(path.join(os.tmpdir(), `${options.dirPrefix}-b-`)),
  ];
  const shared = {
    CROWS_PORT: "0",
    DATABASE_URL: db.url,
    REDIS_URL: svc.redisUrl,
    CROWS_LEASE_MS: String(options.leaseMs),
    CROWS_APPROVAL_WINDOW_MS: "600000",
    // A freeze that catches A inside a transaction: PostgreSQL ends it, and its row lock, soon.
    CROWS_PG_IDLE_TX_TIMEOUT_MS: "2000",
    CROWS_MODEL: "openai-compatible:fake-crow",
    CROWS_MODEL_BASE_URL: fake.url,
    CROWS_MODEL_API_KEY: "test-key",
    ...options.env,
  };
  const a = await startServerProcess({ ...shared, CROWS_DATA_DIR: dirs[0]! });
  const b = await startServerProcess({ ...shared, CROWS_DATA_DIR: dirs[1]! });
  return {
    a,
    b,
    dbUrl: db.url,
    done: async () => {
      a.child.kill("SIGCONT");
      await crash(a);
      await crash(b);
      await fake.close();
      await db.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Waits for the instance's line saying it stepped down from `subject` ("list <id>", "obligation
 * <id>"): the event that proves a thawed instance is done with it. Returns every such line so far.
 */
export async function steppedDownLines(proc: ServerProcess, subject: string, timeoutMs: number): Promise<string[]> {
  const marker = `stepped down from ${subject}`;
  await eventually(
    `the instance to step down from ${subject}`,
    async () => (proc.output().stderr.includes(marker) ? true : undefined),
    timeoutMs,
    25,
  );
  return proc
    .output()
    .stderr.split("\n")
    .filter((l) => l.includes(marker));
}
