// Who may manage webhooks: the one check every surface (REST, GraphQL) calls. Today the owner: the
// role every write needs (src/server/access.ts); when tokens carry scopes, this is the one place
// to ask for the `admin` scope instead. Reads are guarded too: the list names every receiver.
import { ForbiddenError } from "../base/errors.ts";

/** `role` as the access gate admitted the request ("owner" | "reader"; undefined: no token configured, the owner). */
export function requireAdmin(role: string | undefined): void {
  if (role !== undefined && role !== "owner") throw new ForbiddenError("Managing webhooks needs the owner's token.");
}
