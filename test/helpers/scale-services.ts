// The real PostgreSQL and Redis the scale tests run against, from CROWS_TEST_PG_URL and
// CROWS_TEST_REDIS_URL (scripts/test-services.sh starts both on loopback and prints them).
// Without them each of their tests is registered as skipped, with the reason; CI sets CROWS_TEST_SERVICES_REQUIRED=1, so
// there a missing service fails the run instead of skipping it.
import { test, type Test } from "uvu";
import { gated } from "./gate.ts";
import { startTestServer, type TestServer, type TestServerOptions } from "./server.ts";
import { freshDatabase } from "../../harness/pg-database.ts";

export { freshDatabase };

export interface Services {
  pgUrl: string;
  redisUrl: string;
}

/**
 * The services, or null when they are missing: then, on CI (CROWS_TEST_SERVICES_REQUIRED=1), a
 * failing test is registered on `runner` (the suite the file runs, so it reports under its name).
 */
export function services(suite: string, runner: Test<any> = test): Services | null {
  const pgUrl = process.env.CROWS_TEST_PG_URL?.trim();
  const redisUrl = process.env.CROWS_TEST_REDIS_URL?.trim();
  if (pgUrl && redisUrl) return { pgUrl, redisUrl };
  const why = `${suite}: CROWS_TEST_PG_URL / CROWS_TEST_REDIS_URL are not set`;
  if (process.env.CROWS_TEST_SERVICES_REQUIRED === "1") {
    runner(`${suite}: PostgreSQL and Redis are required here`, () => {
      throw new Error(`${why}, and CROWS_TEST_SERVICES_REQUIRED=1 (CI)`);
    });
    return null;
  }
  console.warn(
    `\n!!! SKIPPED ${why}. These tests need a real PostgreSQL and Redis:\n!!!   eval "$(scripts/test-services.sh)" && npm test\n`,
  );
  return null;
}

/** The services and a runner for the tests that need them: `it` registers each as skipped without them. */
export function serviceTests<T = any>(
  suite: string,
  runner: Test<T> = test as Test<T>,
): { svc: Services | null; it: Test<T> } {
  const svc = services(suite, runner);
  return { svc, it: gated(runner, svc ? null : "no PostgreSQL/Redis") };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 15_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/**
 * Two instances (each with its own data folder) sharing a fresh database and the Redis bus, started
 * before the suite and stopped, with the database dropped, after it. Read `a` and `b` inside tests.
 */
export function instancePair(
  svc: Services,
  env: Record<string, string> = {},
  /** Each instance's own dependencies (a fake model, say), made anew for each. */
  deps?: () => TestServerOptions["deps"],
): { readonly a: TestServer; readonly b: TestServer } {
  let db: { url: string; drop(): Promise<void> } | undefined;
  const pair = {} as { a: TestServer; b: TestServer };
  test.before(async () => {
    db = await freshDatabase(svc.pgUrl);
    const shared = { DATABASE_URL: db.url, REDIS_URL: svc.redisUrl, ...env };
    pair.a = await startTestServer({ env: shared, ...(deps ? { deps: deps() } : {}) });
    pair.b = await startTestServer({ env: shared, ...(deps ? { deps: deps() } : {}) });
  });
  test.after(async () => {
    await Promise.allSettled([pair.a?.close(), pair.b?.close()]);
    await db?.drop();
  });
  return pair;
}

/** One in-process server on a fresh database of its own; `done` stops it and drops the database. */
export async function serverOnFreshDatabase(pgUrl: string): Promise<{ server: TestServer; done(): Promise<void> }> {
  const db = await freshDatabase(pgUrl);
  const server = await startTestServer({ env: { DATABASE_URL: db.url } });
  return {
    server,
    done: async () => {
      await server.close();
      await db.drop();
    },
  };
}
