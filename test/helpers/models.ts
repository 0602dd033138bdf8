// Models for tests that need a flight to fail: the real offline brain, with chosen calls refused
// the way a provider error would be.
import { OfflineBrain } from "../../src/models/offline.ts";
import type { Model, ModelReply, ModelRequest } from "../../src/models/model.ts";

export function failingWhen(fails: (request: ModelRequest) => boolean, message = "provider answered 503"): Model & { calls: ModelRequest[] } {
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
