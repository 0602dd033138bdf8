// A nest post needs the write scope, except the owner's reply to an ask (an ask_owner of that
// nest): that is a decision, so the decide scope is enough (docs/security.md "Scopes"). Checked by
// the REST route and the GraphQL mutation alike, before the post is judged.
import type { PrismaClient } from "../generated/prisma/client.ts";
import { ForbiddenError } from "../base/errors.ts";
import type { Principal } from "./principal.ts";
import { missingScopeMessage } from "./scopes.ts";

export async function requirePostScope(
  prisma: PrismaClient,
  principal: Principal,
  nestId: string,
  input: { author: unknown; refers_to?: unknown },
): Promise<void> {
  if (principal.scopes.includes("write")) return;
  const refusal = new ForbiddenError(
    `${missingScopeMessage("write")} With only "decide", post the owner's reply to an ask: author "owner", refers_to the ask.`,
  );
  if (!principal.scopes.includes("decide")) throw refusal;
  const author = typeof input.author === "string" ? input.author.trim() : "";
  const refersTo = typeof input.refers_to === "string" ? input.refers_to.trim() : "";
  if (author !== "owner" || refersTo === "") throw refusal;
  const ask = await prisma.message.findUnique({ where: { id: refersTo }, select: { kind: true, nestId: true } });
  if (ask?.kind !== "ask_owner" || ask.nestId !== nestId) throw refusal;
}
