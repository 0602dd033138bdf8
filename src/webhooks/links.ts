// Decide links (docs/webhooks.md "Decide links"): capability URLs that each decide one approval,
// one tool call (docs/tools.md), or approve one nest ask, and nothing else. A link is /decide/<claims>.<mac>: the claims say what
// it decides, which way, which endpoint it went out on, and until when; the mac is HMAC-SHA256
// under a key this server made once and keeps in its database (ServerKey), so every instance
// checks every link and a restart keeps them valid. A GET only shows what the link would do; the
// POST decides (compat/decide.ts). Used once: the approval or ask itself can only be
// decided once, so a second use finds it decided and changes nothing.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { LinkSubject } from "./event-types.ts";

export const DECIDE_PREFIX = "/decide/";

/** The link segment of the path: <claims>.<mac>, both base64url (the decide route's own pattern). */
export const LINK_SEGMENT = "[A-Za-z0-9_-]{8,2000}\\.[A-Za-z0-9_-]{43}";
const DECIDE_PATH = new RegExp(`^\\/decide\\/${LINK_SEGMENT}$`);

/** True for a path a decide link names (its route asks no token: compat/decide.ts). */
export const isDecidePath = (pathname: string): boolean => DECIDE_PATH.test(pathname);

export type LinkAction = "approve" | "reject";

export interface LinkClaims {
  subject: LinkSubject;
  action: LinkAction;
  /** The endpoint the link went out on: the decision's actor names it. */
  webhookId: string;
  /** Unix ms after which the link decides nothing (the approval's deadline). */
  expiresMs: number;
}

/** Who decided, when a decide link did: recorded on the verdict (the actor field the log's events carry). */
export function linkActor(webhookId: string): { kind: "link"; webhook_id: string } {
  return { kind: "link", webhook_id: webhookId };
}

const KEY_NAME = "decide-links";

/** The server's link key: read, or made once (a race between instances keeps the first one stored). */
export async function linkKey(prisma: PrismaClient): Promise<Buffer> {
  const found = await prisma.serverKey.findUnique({ where: { name: KEY_NAME } });
  if (found) return Buffer.from(found.value, "base64");
  try {
    await prisma.serverKey.create({ data: { name: KEY_NAME, value: randomBytes(32).toString("base64") } });
  } catch {
    // Another instance stored its key first: theirs is the one, read below.
  }
  const stored = await prisma.serverKey.findUniqueOrThrow({ where: { name: KEY_NAME } });
  return Buffer.from(stored.value, "base64");
}

const mac = (key: Buffer, claims: string) => createHmac("sha256", key).update(claims).digest("base64url");

type Wire =
  | { k: "approval"; i: string; t: string; a: LinkAction; w: string; e: number }
  | { k: "ask"; n: string; m: string; a: LinkAction; w: string; e: number }
  | { k: "tool"; c: string; a: LinkAction; w: string; e: number };

export function signLink(key: Buffer, claims: LinkClaims): string {
  const { subject, action, webhookId, expiresMs } = claims;
  const wire: Wire =
    subject.kind === "approval"
      ? { k: "approval", i: subject.itemId, t: subject.target, a: action, w: webhookId, e: expiresMs }
      : subject.kind === "ask"
        ? { k: "ask", n: subject.nestId, m: subject.msgId, a: action, w: webhookId, e: expiresMs }
        : { k: "tool", c: subject.callId, a: action, w: webhookId, e: expiresMs };
  const text = Buffer.from(JSON.stringify(wire)).toString("base64url");
  return `${DECIDE_PREFIX}${text}.${mac(key, text)}`;
}

/** The claims of a link whose mac is this server's, or undefined (tampered, made elsewhere, malformed). */
export function readLink(key: Buffer, pathname: string): LinkClaims | undefined {
  if (!isDecidePath(pathname)) return undefined;
  const [text, given] = pathname.slice(DECIDE_PREFIX.length).split(".") as [string, string];
  const expected = Buffer.from(mac(key, text));
  const presented = Buffer.from(given);
  if (expected.length !== presented.length || !timingSafeEqual(expected, presented)) return undefined;
  let wire: Wire;
  try {
    wire = JSON.parse(Buffer.from(text, "base64url").toString("utf8")) as Wire;
  } catch {
    return undefined;
  }
  if ((wire.a !== "approve" && wire.a !== "reject") || typeof wire.w !== "string" || typeof wire.e !== "number")
    return undefined;
  const subject: LinkSubject | undefined =
    wire.k === "approval" && typeof wire.i === "string" && (wire.t === "triage" || wire.t === "output")
      ? { kind: "approval", itemId: wire.i, target: wire.t }
      : wire.k === "ask" && typeof wire.n === "string" && typeof wire.m === "string"
        ? { kind: "ask", nestId: wire.n, msgId: wire.m }
        : wire.k === "tool" && typeof wire.c === "string"
          ? { kind: "tool", callId: wire.c }
          : undefined;
  return subject ? { subject, action: wire.a, webhookId: wire.w, expiresMs: wire.e } : undefined;
}
