// The principal of the A2A request being served: set by the door's middleware around the SDK's
// handler, read by the executor and the task store (which the SDK calls without it).
import { AsyncLocalStorage } from "node:async_hooks";
import { ROOT, type Principal } from "../../access/principal.ts";

export const callerOf = new AsyncLocalStorage<Principal>();
export const caller = (): Principal => callerOf.getStore() ?? ROOT;
