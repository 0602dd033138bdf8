// The decide links' pages (docs/webhooks.md "Decide links"). The link is the credential for its
// one decision, so the access gate lets exactly these paths through without the token. A GET (or
// HEAD) only shows what the link would do, with a button; link previewers and mail scanners fetch
// links, and nothing they fetch changes anything. The button POSTs to the same link, and the POST
// decides, through the same verdict path as POST /api/verdicts (or, for a nest ask, posts the
// owner's reply with the approval phrase), with the link as the actor. A link that was tampered
// with, expired, or whose decision is already made answers a clear page and changes nothing.
import type { App } from "../src/app.ts";
import { BadInputError, NotFoundError } from "../src/base/errors.ts";
import { MAX_REASON_CHARS } from "../src/flock/reason.ts";
import type { Target } from "../src/flock/events.ts";
import { createHash } from "node:crypto";
import { escapeHtml } from "../src/http/html-page.ts";
import { linkActor, readLink, signLink, type LinkClaims } from "../src/webhooks/links.ts";
import type { CompatRequest, CompatResponse } from "./router.ts";

interface Page {
  status: number;
  title: string;
  lines: string[];
  /** The button that POSTs this link, on a confirmation page. */
  button?: string;
  /** A second button posting the other link of the pair (an approve link's page offers "Reject instead"). */
  instead?: { label: string; path: string };
  /** An approval's page (and an ask's) also takes the owner's reason (and on a reject, a request for another try). */
  reasonForm?: "approve" | "reject";
}

const REASON_BOX = `<label>Your reason (optional, at most ${MAX_REASON_CHARS.toLocaleString("en-US")} characters)<textarea name="reason" rows="3" maxlength="${MAX_REASON_CHARS}"></textarea></label>`;

const REWORK_BOX = `<label><input type="checkbox" name="rework" value="1"> Ask for another try, with the reason</label>`;

/** The confirmation's form(s): the bare button, or with a reason box (a second form on an approve page). */
function formsOf(page: Page): string {
  if (!page.button) return "";
  const button = `<button type="submit">${escapeHtml(page.button)}</button>`;
  if (page.reasonForm === "reject") return `<form method="post">${REASON_BOX}${REWORK_BOX}${button}</form>`;
  const bare = `<form method="post">${button}</form>`;
  if (page.reasonForm !== "approve") return bare;
  return `${bare}\n<form method="post">${REASON_BOX}<button type="submit">${escapeHtml(page.button)} with this reason</button></form>`;
}

/** The time left, as a person reads it: "about 9 minutes left", "under a minute left". */
export function timeLeft(ms: number): string {
  if (ms < 60_000) return "under a minute left";
  const minutes = Math.round(ms / 60_000);
  if (minutes < 120) return `about ${minutes} minute${minutes === 1 ? "" : "s"} left`;
  return `about ${Math.round(minutes / 60)} hours left`;
}

/**
 * The page's one script: each <time datetime> shown in the reader's own time zone (the server
 * writes UTC, not knowing it). Allowed by its hash alone; without it the UTC text stays.
 */
const LOCAL_TIME_SCRIPT =
  'for(const t of document.querySelectorAll("time[datetime]"))t.textContent=new Date(t.dateTime).toLocaleString([],{dateStyle:"medium",timeStyle:"short"})+" your time";';
const LOCAL_TIME_HASH = createHash("sha256").update(LOCAL_TIME_SCRIPT).digest("base64");

/** "9 min 32 s", "1 h 5 min": what is left until `deadlineMs`. */
export function timeLeftText(deadlineMs: number, nowMs: number): string {
  const s = Math.max(0, Math.floor((deadlineMs - nowMs) / 1000));
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${s} s`;
}

/** The page as the answer (the server leaves the body out for a HEAD). */
function sendPage(page: Page): CompatResponse {
  const form = formsOf(page);
  const instead = page.instead
    ? `\n<form method="post" action="${escapeHtml(page.instead.path)}"><button type="submit" class="instead">${escapeHtml(page.instead.label)}</button></form>`
    : "";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>crows: ${escapeHtml(page.title)}</title>
<link rel="icon" href="data:,">
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1d1d1f}blockquote{margin:1rem 0;padding:.5rem 1rem;background:#f1f1f4;border-radius:4px;white-space:pre-wrap}button{font:inherit;padding:.6em 1.4em;min-height:44px;min-width:44px;margin:.25rem 0}form{display:inline-block;margin-right:.75rem}button.instead{background:#fff;color:#b3261e;border:1px solid #b3261e;border-radius:6px}nav{margin-top:2rem;font-size:14px}label{display:block;margin:1rem 0 .5rem}textarea{display:block;width:100%;box-sizing:border-box;font:inherit}</style>
</head>
<body>
<main>
<h1>${escapeHtml(page.title)}</h1>
${page.lines.map((line) => `<p>${line}</p>`).join("\n")}
${form}${instead}
<nav><a href="/">Open the crows console</a> to see every approval and the whole list.</nav>
</main>
<script>${LOCAL_TIME_SCRIPT}</script>
</body>
</html>
`;
  const headers = {
    "content-type": "text/html; charset=utf-8",
    "content-length": String(Buffer.byteLength(html)),
    // No script, nothing loaded; the form may only post here. same-origin: the button's POST then
    // carries this server's Origin (no-referrer would make it "null", which the gate refuses).
    "content-security-policy": `default-src 'none'; script-src 'sha256-${LOCAL_TIME_HASH}'; style-src 'unsafe-inline'; img-src data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    "referrer-policy": "same-origin",
    "x-content-type-options": "nosniff",
    "x-robots-tag": "noindex",
    "cache-control": "no-store",
  };
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
const BAD_FORM: Page = {
  status: 400,
  title: "This answer could not be read",
  lines: ["Nothing was decided. Go back, and keep the reason to plain text."],
};
const decided = (what: string): Page => ({
  status: 409,
  title: "Already decided",
  lines: [`${escapeHtml(what)} Nothing was changed.`],
});

/** What the link would decide, as it stands now: the confirmation page, or why it cannot. */
async function current(app: App, key: Buffer, claims: LinkClaims, nowMs: number): Promise<Page | { ok: Page }> {
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
    // Each link is signed with its approval's deadline; a rework opens the approval again with a new
    // one, so a link sent for an earlier try cannot decide the next.
    if (claims.expiresMs !== row.deadline.getTime())
      return decided(`This link was for an earlier try at the ${subject.target} of ${subject.itemId}.`);
    const proposal =
      subject.target === "triage"
        ? `Triage: ${item.mode ?? "?"} (${item.taskType ?? "other"})${item.reason ? `, because ${item.reason}` : ""}`
        : `Answer: ${item.answer ?? ""}`;
    const deadlineMs = Math.min(claims.expiresMs, row.deadline.getTime());
    const iso = new Date(deadlineMs).toISOString();
    return {
      ok: {
        status: 200,
        title: `${verb} the ${subject.target} of “${escapeHtml(item.text)}”?`,
        lines: [
          `The item: ${quote(item.text)}`,
          `What is proposed: ${quote(proposal)}`,
          `<strong>${timeLeftText(deadlineMs, nowMs)} left</strong>: it waits until <time datetime="${iso}">${escapeHtml(iso.replace("T", " ").slice(0, 16))} UTC</time> (${timeLeft(deadlineMs - nowMs)}; silence then counts as no). Opening this page changed nothing; the button decides.`,
        ],
        button: verb,
        reasonForm: claims.action,
        // The approve link's page also offers no: the reject link of the same pair (the same signed
        // claims with the other action, exactly the reject_url delivered beside it). Never the other
        // way: a reject link's page offers no approval, so a leaked reject link can only say no.
        instead:
          claims.action === "approve"
            ? { label: "Reject instead", path: signLink(key, { ...claims, action: "reject" }) }
            : undefined,
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
      // The reply may carry the owner's reason, as a verdict may (docs/rules.md "Reasons").
      reasonForm: "approve",
    },
  };
}

/** Makes the decision; the page to answer with. */
async function decide(app: App, claims: LinkClaims, form: URLSearchParams): Promise<Page> {
  const { subject } = claims;
  if (subject.kind === "approval") {
    const approve = claims.action === "approve";
    const reason = form.get("reason");
    const rework = !approve && form.get("rework") !== null;
    try {
      await app.flock.postVerdict({
        itemId: subject.itemId,
        target: subject.target as Target, // readLink admits "triage" or "output" only
        approve,
        reason,
        rework,
        actor: linkActor(claims.webhookId),
      });
    } catch (error) {
      if (error instanceof NotFoundError)
        return decided(`This ${subject.target} of ${subject.itemId} was already decided.`);
      if (error instanceof BadInputError)
        return {
          status: 400,
          title: "Nothing was decided",
          lines: [`${escapeHtml(error.message)} Go back and shorten it.`],
        };
      throw error;
    }
    return {
      status: 200,
      title: approve ? "Approved" : "Rejected",
      lines: [
        `The ${subject.target} of ${escapeHtml(subject.itemId)} is ${approve ? "approved" : "rejected"}. This link is used up.`,
        ...(rework ? ["Another try was asked for: if the item has tries and budget left, it flies again."] : []),
      ],
    };
  }
  if (subject.kind === "tool") return decideToolCall(app, claims, subject.callId);
  const ask = await app.prisma.message.findUniqueOrThrow({ where: { id: subject.msgId } });
  try {
    await app.chat.post(subject.nestId, {
      author: "owner",
      text: ask.approvalPhrase,
      refers_to: subject.msgId,
      reason: form.get("reason"),
      actor: linkActor(claims.webhookId),
    });
  } catch (error) {
    if (error instanceof BadInputError)
      return {
        status: 400,
        title: "Nothing was replied",
        lines: [`${escapeHtml(error.message)} Go back and shorten it.`],
      };
    throw error;
  }
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
        `${call.nestId === "" ? `On item ${escapeHtml(call.itemId)}` : `In nest ${escapeHtml(call.nestId)}, answering ${escapeHtml(call.itemId)}`}, ${escapeHtml(call.crow)} asks to call ${escapeHtml(call.tool)} on ${escapeHtml(call.serverName)} with: ${quote(args)}`,
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
  const key = await app.webhooks.linkKey();
  const claims = readLink(key, request.path);
  if (!claims) return sendPage(INVALID);
  const state = await current(app, key, claims, Date.now());
  if (!("ok" in state)) return sendPage(state);
  if (request.method !== "POST") return sendPage(state.ok);
  const form = request.form ? await request.form() : new URLSearchParams();
  if (!form) return sendPage(BAD_FORM);
  return sendPage(await decide(app, claims, form));
}
