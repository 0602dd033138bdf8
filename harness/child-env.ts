// The environment a child process of the harness (a server, a CLI command) starts with: the
// caller's own, minus everything that configures crows. A DATABASE_URL or CROWS_TOKEN left in a
// developer's shell must not turn a "SQLite" test into a PostgreSQL one, or answer it with 401s;
// the child gets only what the test or bench passes.
const INHERITED_CONFIG = /^(CROWS_|DATABASE_URL$|REDIS_URL$)/;

export function childEnv(env: Record<string, string> = {}): Record<string, string> {
  const clean: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !INHERITED_CONFIG.test(key)) clean[key] = value;
  return { ...clean, ...env };
}
