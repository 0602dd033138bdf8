// The one policy for a clash on (stream, seq): another instance appended to the stream first. The
// attempt is retried after a short random pause, a bounded number of times; every other error, and
// a clash past the bound, is thrown.

const MAX_CONFLICT_RETRIES = 25;

function isUniqueClash(error: unknown): boolean {
  const e = error as { code?: string };
  return (
    e?.code === "P2002" ||
    e?.code === "23505" ||
    e?.code === "SQLITE_CONSTRAINT_UNIQUE" ||
    e?.code === "SQLITE_CONSTRAINT_PRIMARYKEY"
  );
}

/** A short random pause breaks the lockstep of two instances appending one after another. */
const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * (attempt + 1))));

/**
 * Runs `attempt` until it succeeds or fails with something other than a seq clash. The attempt
 * undoes its own in-memory state when it fails (a stream's seq counter may be ahead of the table
 * after a rollback), so that state is reset while it still holds whatever guards it.
 */
export async function retryOnSeqClash<T>(attempt: () => Promise<T>): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n < MAX_CONFLICT_RETRIES && isUniqueClash(error)) {
        await backoff(n);
        continue;
      }
      throw error;
    }
  }
}
