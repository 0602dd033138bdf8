// Knows how many requests the server is still answering, so a graceful stop can answer them before
// the flock stops (a list posted just before SIGTERM gets its 202, not a reset or a 400).
import type http from "node:http";

export interface InFlight {
  readonly count: number;
  /** Resolves when no request is in flight, or after `timeoutMs`, whichever is first. */
  idle(timeoutMs: number): Promise<void>;
}

export function trackInFlight(server: http.Server): InFlight {
  let count = 0;
  const waiters = new Set<() => void>();
  server.on("request", (_req: http.IncomingMessage, res: http.ServerResponse) => {
    count++;
    res.once("close", () => {
      count--;
      if (count === 0) for (const wake of [...waiters]) wake();
    });
  });
  return {
    get count() {
      return count;
    },
    idle: (timeoutMs) =>
      new Promise<void>((resolve) => {
        if (count === 0) return resolve();
        const timer = setTimeout(done, timeoutMs);
        function done() {
          clearTimeout(timer);
          waiters.delete(done);
          resolve();
        }
        waiters.add(done);
      }),
  };
}
