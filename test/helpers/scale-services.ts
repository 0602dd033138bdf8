// The real PostgreSQL and Redis the scale tests run against, from CROWS_TEST_PG_URL and
// CROWS_TEST_REDIS_URL (scripts/test-services.sh starts both on loopback and prints them).
// Without them the scale suites are skipped, loudly; CI sets CROWS_TEST_SERVICES_REQUIRED=1, so
// there a missing service fails the run instead of skipping it.
import { randomBytes } from "node:crypto";
import pg from "pg";
import { test } from "uvu";

export interface Services {
  pgUrl: string;
  redisUrl: string;
}

export function services(suite: string): Services | null {
  const pgUrl = process.env.CROWS_TEST_PG_URL?.trim();
  const redisUrl = process.env.CROWS_TEST_REDIS_URL?.trim();
  if (pgUrl && redisUrl) return { pgUrl, redisUrl };
  const why = `${suite}: CROWS_TEST_PG_URL / CROWS_TEST_REDIS_URL are not set`;
  if (process.env.CROWS_TEST_SERVICES_REQUIRED === "1") {
    test(`${suite}: PostgreSQL and Redis are required here`, () => {
      throw new Error(`${why}, and CROWS_TEST_SERVICES_REQUIRED=1 (CI)`);
    });
    return null;
  }
  console.warn(
    `\n!!! SKIPPED ${why}. These tests need a real PostgreSQL and Redis:\n!!!   eval "$(scripts/test-services.sh)" && npm test\n`,
  );
  return null;
}

/** A new, empty database on the test server; drop() removes it (closing any connection left). */
export async function freshDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `crows_scale_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}

/** Polls `check` until it returns a value other than undefined, or fails after `timeoutMs`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
