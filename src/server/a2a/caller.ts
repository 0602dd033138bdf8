// The principal of the A2A request being served: the SDK's user for the request (built by the
// door's `userBuilder` from what the access gate admitted), handed to the executor and the task
// store in the call's context. Not an AsyncLocalStorage: one of those, once used, costs every
// promise of the process a hook.
import type { ServerCallContext, User } from "@a2a-js/sdk/server";
import { ROOT, type Principal } from "../../access/principal.ts";

export class Caller implements User {
  readonly isAuthenticated = true;
  readonly userName = "crows";
  constructor(readonly principal: Principal) {}
}

/** The principal a call's context carries (the root for a call the door did not build). */
export const callerIn = (context: ServerCallContext | undefined): Principal =>
  context?.user instanceof Caller ? context.user.principal : ROOT;

/** Whether the call's principal may decide approvals (is asked, as input-required). */
export const mayDecideIn = (context: ServerCallContext | undefined): boolean =>
  callerIn(context).scopes.includes("decide");
