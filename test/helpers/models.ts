// Models for tests that need a flight to fail: the real offline brain, with chosen calls refused
// the way a provider error would be.
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model, ModelReply, ModelRequest } from "../../src/models/model.ts";

export function failingWhen(
  fails: (request: ModelRequest) => boolean,
  message = "provider answered 503",
): Model & { calls: ModelRequest[] } {
  const brain = new OfflineBrain();
  const calls: ModelRequest[] = [];
  return {
    name: "offline-with-failures",
    calls,
    async generate(request: ModelRequest): Promise<ModelReply> {
      calls.push(request);
      if (fails(request)) throw new Error(message);
      return brain.generate(request);
    },
  };
}

/** What a paced call does: answer after `delayMs` (default at once), or never (until aborted). */
export type Pace = { delayMs?: number; never?: boolean };

/**
 * The offline brain with the crows' calls paced per call (0, 1, 2, ... in the order made): a slow
 * crow, a crow that never answers, a late answer racing a second one. Other roles answer at once.
 */
export function pacedCrows(
  pace: (crowCall: number, request: ModelRequest) => Pace,
): Model & { crowCalls: ModelRequest[] } {
  const brain = new OfflineBrain();
  const crowCalls: ModelRequest[] = [];
  return {
    name: "offline-paced",
    crowCalls,
    async generate(request: ModelRequest): Promise<ModelReply> {
      if (request.role !== "crow") return brain.generate(request);
      const { delayMs = 0, never = false } = pace(crowCalls.length, request);
      crowCalls.push(request);
      await new Promise<void>((resolve, reject) => {
        const aborted = () => reject(new Error("aborted"));
        if (request.signal?.aborted) return aborted();
        request.signal?.addEventListener("abort", aborted, { once: true });
        if (!never) setTimeout(resolve, delayMs);
      });
      return brain.generate(request);
    },
  };
}
