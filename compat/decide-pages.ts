// The decide links' pages (docs/webhooks.md "Decide links"). The link is the credential for its
// one decision, so the access gate lets exactly these paths through without the token. A GET (or
// HEAD) only shows what the link would do, with a button; link previewers and mail scanners fetch
// links, and nothing they fetch changes anything. The button POSTs to the same link, and the POST
// decides, through the same verdict path as POST /api/verdicts (or, for a nest ask, posts the
// owner's reply with the approval phrase), with the link as the actor. A link that was tampered
// with, expired, or whose decision is already made answers a clear page and changes nothing.
import type { App } from "../src/app.ts";
import { NotFoundError } from "../src/base/errors.ts";
import type { Target } from "../src/flock/events.ts";
import { escapeHtml, htmlPageHeaders, htmlPageText } from "../src/http/html-page.ts";
import { linkActor, readLink, type LinkClaims } from "../src/webhooks/links.ts";
import type { CompatRequest, CompatResponse } from "./router.ts";

interface Page {
  status: number;
  title: string;
  lines: string[];
  /** The button that POSTs this link, on a confirmation page. */
  button?: string;
}

/** The page as the answer (the server leaves the body out for a HEAD). */
function sendPage(page: Page): CompatResponse {
  const form = page.button
    ? `<form method="post"><button type="submit">${escapeHtml(page.button)}</button></form>`
    : "";
  const main = `<h1>${escapeHtml(page.title)}</h1>
${page.lines.map((line) => `<p>${line}</p>`).join("\n")}
${form}`;
  const style =
    "blockquote{margin:1rem 0;padding:.5rem 1rem;background:#f1f1f4;border-radius:4px;white-space:pre-wrap}button{font:inherit;padding:.4em 1.2em}";
  const html = htmlPageText({ title: `crows: ${page.title}`, main, style, noindex: true });
  // same-origin: the button's POST then carries this server's Origin (no-referrer would make it
  // "null", which the gate refuses).
  const headers = { ...htmlPageHeaders(html), "referrer-policy": "same-origin", "x-robots-tag": "noindex" };
  return { status: page.status, page: html, headers };
}

const quote = (text: string) => `</p><blockquote>${escapeHtml(text)}</blockquote><p>`;

const INVALID: Page = {
  status: 404,
  title: "This link is not valid",
  lines: ["It was changed, cut short, or not made by this server. Nothing was decided. Decide in the console instead."],
};
const EXPIRED: Page = {
  status: 410,
  title: "This link has expired",
  lines: ["Its approval's deadline has passed, and silence counts as no. Nothing was changed."],
};
const decided = (what: string): Page => ({
  status: 409,
  title: "Already decided",
  lines: [`${escapeHtml(what)} Nothing was changed.`],
});

/** What the link would decide, as it stands now: the confirmation page, or why it cannot. */
async function current(app: App, claims: LinkClaims, nowMs: number): Promise<Page | { ok: Page }> {
  const verb = claims.action === "approve" ? "Approve" : "Reject";
  const { subject } = claims;
  if (subject.kind === "approval") {
    const [row, item] = await Promise.all([
      app.log.state.approval(subject.itemId, subject.target),
      app.log.state.item(subject.itemId),
    ]);
    if (!row || !item) return INVALID;
    if (row.status !== "pending")
      return decided(`This ${subject.target} of ${subject.itemId} was already decided: ${row.status}.`);
    if (nowMs >= Math.min(claims.expiresMs, row.deadline.getTime())) return EXPIRED;
    const proposal =
      subject.target === "triage"
        ? `Triage: ${item.mode ?? "?"} (${item.taskType ?? "other"})${item.reason ? `, because ${item.reason}` : ""}`
        : `Answer: ${item.answer ?? ""}`;
    return {
      ok: {
        status: 200,
        title: `${verb} the ${subject.target} of ${subject.itemId}?`,
        lines: [
          `The item: ${quote(item.text)}`,
          `What is proposed: ${quote(proposal)}`,
          `Waits until ${escapeHtml(row.deadline.toISOString())}. Opening this page changed nothing; the button decides.`,
        ],
        button: verb,
      },
    };
  }
  if (subject.kind === "tool") return currentToolCall(app, claims, nowMs);
  const ask = await app.prisma.message.findUnique({ where: { id: subject.msgId } });
  if (!ask || ask.nestId !== subject.nestId || ask.kind !== "ask_owner") return INVALID;
  if (ask.approvedAt) return decided(`This ask was already approved.`);
  if (nowMs >= Math.min(claims.expiresMs, ask.createdAt.getTime() + app.config.approvalWindowMs)) return EXPIRED;
  return {
    ok: {
      status: 200,
      title: `Reply "${ask.approvalPhrase}" to ${ask.author}'s ask?`,
      lines: [
        `In nest ${escapeHtml(ask.nestId)}, ${escapeHtml(ask.author)} asks: ${quote(ask.text)}`,
        `The button posts your reply ${quote(ask.approvalPhrase)} Opening this page changed nothing.`,
      ],
      button: `Reply "${ask.approvalPhrase}"`,
    },
  };
}

/** Makes the decision; the page to answer with. */
async function decide(app: App, claims: LinkClaims): Promise<Page> {
  const { subject } = claims;
  if (subject.kind === "approval") {
    const approve = claims.action === "approve";
    try {
      await app.flock.postVerdict({
        itemId: subject.itemId,
        target: subject.target as Target, // readLink admits "triage" or "output" only
        approve,
        actor: linkActor(claims.webhookId),
      });
    } catch (error) {
      if (error instanceof NotFoundError)
        return decided(`This ${subject.target} of ${subject.itemId} was already decided.`);
      throw error;
    }
    return {
      status: 200,
      title: approve ? "Approved" : "Rejected",
      lines: [
        `The ${subject.target} of ${escapeHtml(subject.itemId)} is ${approve ? "approved" : "rejected"}. This link is used up.`,
      ],
    };
  }
  if (subject.kind === "tool") return decideToolCall(app, claims, subject.callId);
  const ask = await app.prisma.message.findUniqueOrThrow({ where: { id: subject.msgId } });
  await app.chat.post(subject.nestId, {
    author: "owner",
    text: ask.approvalPhrase,
    refers_to: subject.msgId,
    actor: linkActor(claims.webhookId),
  });
  const after = await app.prisma.message.findUniqueOrThrow({ where: { id: subject.msgId } });
  if (!after.approvedAt) return decided("The reply was posted, but the ask did not take it (it had closed).");
  return {
    status: 200,
    title: "Approved",
    lines: [
      `Your reply ${quote(ask.approvalPhrase)} was posted to ${escapeHtml(subject.nestId)}. This link is used up.`,
    ],
  };
}

/** A tool call's link: the call's server, tool and whole arguments, while it waits. */
async function currentToolCall(app: App, claims: LinkClaims, nowMs: number): Promise<Page | { ok: Page }> {
  const callId = claims.subject.kind === "tool" ? claims.subject.callId : "";
  const call = await app.flock.toolCalls.call(callId);
  if (!call) return INVALID;
  if (call.status !== "asked") return decided(`This tool call was already decided.`);
  if (!call.deadline || nowMs >= Math.min(claims.expiresMs, call.deadline.getTime())) return EXPIRED;
  const verb = claims.action === "approve" ? "Approve" : "Refuse";
  let args = call.args;
  try {
    args = JSON.stringify(JSON.parse(call.args), null, 2);
  } catch {}
  return {
    ok: {
      status: 200,
      title: `${verb} ${call.crow}'s call of ${call.tool}?`,
      lines: [
        `On item ${escapeHtml(call.itemId)}, ${escapeHtml(call.crow)} asks to call ${escapeHtml(call.tool)} on ${escapeHtml(call.serverName)} with: ${quote(args)}`,
        `Waits until ${escapeHtml(call.deadline.toISOString())}. Opening this page changed nothing; the button decides.`,
      ],
      button: verb,
    },
  };
}

async function decideToolCall(app: App, claims: LinkClaims, callId: string): Promise<Page> {
  const approve = claims.action === "approve";
  try {
    await app.flock.toolCalls.decide(callId, { approve }, linkActor(claims.webhookId));
  } catch (error) {
    if (error instanceof NotFoundError) return decided("This tool call was already decided, or its deadline passed.");
    throw error;
  }
  return {
    status: 200,
    title: approve ? "Approved" : "Refused",
    lines: [`The tool call ${escapeHtml(callId)} is ${approve ? "approved" : "refused"}. This link is used up.`],
  };
}

/** A decide link's answer: GET and HEAD show what it would do, POST decides (compat/decide.ts). */
export async function answerLink(app: App, request: CompatRequest): Promise<CompatResponse> {
  const claims = readLink(await app.webhooks.linkKey(), request.path);
  if (!claims) return sendPage(INVALID);
  const state = await current(app, claims, Date.now());
  if (!("ok" in state)) return sendPage(state);
  if (request.method !== "POST") return sendPage(state.ok);
  return sendPage(await decide(app, claims));
}
