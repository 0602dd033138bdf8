// The MCP tools: each a thin call into the same engine calls REST makes (docs/integrations.md),
// refused with the same scopes. Reads are readOnlyHint; the rest are not.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { CallToolResult, ServerNotification, ServerRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { App } from "../../app.ts";
import { requireScope, ROOT, type Principal } from "../../access/principal.ts";
import { requirePostScope } from "../../access/post-scope.ts";
import { listStream } from "../../base/streams.ts";
import { parsedPayload } from "../../log/parsed-payload.ts";
import { MAX_PAGE } from "../../base/util/clamp.ts";
import { decideEach, MAX_DECISIONS } from "../agents/decide-each.ts";
import { eventBatches } from "../agents/event-batches.ts";
import { approvalAsked, linesOf, ListProgress, mustSendNow, readList, waitingApprovals } from "../agents/list-view.ts";
import { MAX_REASON_CHARS } from "../../flock/reason.ts";

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Who the access gate admitted for the request that carries this call (src/server/mcp/index.ts). */
export function principalOfCall(extra: Extra): Principal {
  return (extra.authInfo?.extra?.principal as Principal | undefined) ?? ROOT;
}

const result = (value: unknown): CallToolResult => ({
  content: [{ type: "text", text: JSON.stringify(value, null, 2) }],
  structuredContent: value as Record<string, unknown>,
});

/** One verdict's fields, as decide_approval takes them and each of decide_approvals' decisions. */
const VERDICT = {
  item_id: z.string(),
  target: z.enum(["triage", "output"]),
  approve: z.boolean(),
  // Typed only: the bound and the trimming are the engine's (src/flock/reason.ts), as for REST.
  reason: z
    .string()
    .optional()
    .describe(
      `Why, in the owner's words: optional, at most ${MAX_REASON_CHARS.toLocaleString("en-US")} characters after trimming.`,
    ),
};

export function registerTools(server: McpServer, app: App): void {
  server.registerTool(
    "submit_list",
    {
      title: "Hand a todo list to the flock",
      description:
        'Submits a todo list (one item a line) to the flock (scope write). With wait (the default) the call follows the list, sending progress notifications (every event a line; the approvals it leaves waiting in _meta["crows/waits"]), and returns the list with its answers once it finishes; approvals it needs must be decided meanwhile (decide_approval). wait: false returns the list_id at once.',
      inputSchema: {
        text: z.string().describe("The list, one item a line (1-50 items)."),
        requester: z.string().optional().describe('Who asks (a self-asserted name); default "mcp".'),
        nest_id: z.string().optional().describe("The nest whose crows work it; default todo."),
        wait: z.boolean().optional().describe("Follow the list to its end (default true)."),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      const principal = principalOfCall(extra);
      requireScope(principal, "write");
      const { listId } = await app.flock.submitList({
        text: args.text,
        requester: args.requester ?? "mcp",
        nestId: args.nest_id,
        actor: principal.actor,
        signal: extra.signal,
      });
      if (args.wait === false) return result({ list_id: listId });
      await followToEnd(app, listId, extra);
      return result(await readList(app, listId));
    },
  );

  server.registerTool(
    "read_list",
    {
      title: "Read a list",
      description: "A list's items with their stages, answers, skip reasons and verdicts (scope read).",
      inputSchema: { list_id: z.string() },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      requireScope(principalOfCall(extra), "read");
      return result(await readList(app, args.list_id));
    },
  );

  server.registerTool(
    "cancel_list",
    {
      title: "Cancel a list",
      description:
        "Cancels a running list (scope write): waiting items are skipped, flights in the air land, approvals waiting are rejected (docs/rules.md).",
      inputSchema: { list_id: z.string() },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      const principal = principalOfCall(extra);
      requireScope(principal, "write");
      const { listId, cancelledAt } = await app.flock.cancelList({ listId: args.list_id, actor: principal.actor });
      return result({ list_id: listId, cancelled_at: cancelledAt.toISOString() });
    },
  );

  server.registerTool(
    "pending_approvals",
    {
      title: "Approvals waiting on the owner",
      description: "The triage and output approvals waiting for a verdict, oldest first (scope read).",
      inputSchema: { list_id: z.string().optional().describe("Only this list's.") },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      requireScope(principalOfCall(extra), "read");
      return result({ approvals: await waitingApprovals(app, args.list_id) });
    },
  );

  server.registerTool(
    "decide_approval",
    {
      title: "Approve or reject",
      description:
        "The owner's verdict on a waiting approval (scope decide), as POST /api/verdicts: a rejected triage skips the item; a rejected output demotes its crows. An optional reason is kept with the verdict.",
      inputSchema: VERDICT,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      const principal = principalOfCall(extra);
      requireScope(principal, "decide");
      await app.flock.postVerdict({
        itemId: args.item_id,
        target: args.target,
        approve: args.approve,
        reason: args.reason,
        actor: principal.actor,
      });
      return result({ item_id: args.item_id, target: args.target, verdict: args.approve ? "approved" : "rejected" });
    },
  );

  server.registerTool(
    "decide_approvals",
    {
      title: "Approve or reject several",
      description: `Several verdicts in one call (scope decide), each as decide_approval would record it, in order and each on its own: one refused (named with why) leaves the others standing. Up to ${MAX_DECISIONS}: e.g. every approval a progress notification's _meta["crows/waits"] names. A tool error only when none was recorded.`,
      inputSchema: {
        decisions: z.array(z.object(VERDICT)).min(1).max(MAX_DECISIONS),
      },
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      const principal = principalOfCall(extra);
      requireScope(principal, "decide");
      const refused = await decideEach(
        app,
        args.decisions,
        (d) => ({ itemId: d.item_id, target: d.target, approve: d.approve, reason: d.reason }),
        principal.actor,
      );
      const decided = args.decisions.length - refused.length;
      return {
        ...result({
          decided,
          refused: refused.map(({ index, why }) => {
            const { item_id, target } = args.decisions[index]!;
            return { item_id, target, why };
          }),
        }),
        ...(decided === 0 ? { isError: true } : {}),
      };
    },
  );

  server.registerTool(
    "post_to_nest",
    {
      title: "Post in a nest",
      description:
        'Posts a message to a nest (scope write; with only decide, the owner\'s reply to an ask: author "owner", refers_to the ask).',
      inputSchema: {
        nest_id: z.string(),
        text: z.string(),
        author: z.string().optional().describe('Default "owner".'),
        to: z.string().optional(),
        refers_to: z.string().optional(),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    async (args, extra) => {
      const principal = principalOfCall(extra);
      const author = args.author ?? "owner";
      await app.chat.requireNest(args.nest_id);
      await requirePostScope(app.prisma, principal, args.nest_id, { author, refers_to: args.refers_to });
      const record = await app.chat.post(args.nest_id, {
        author,
        text: args.text,
        to: args.to,
        refers_to: args.refers_to,
        actor: principal.actor,
      });
      return result(record);
    },
  );

  server.registerTool(
    "read_nest",
    {
      title: "Read a nest",
      description: "A nest's newest messages, oldest of them first (scope read).",
      inputSchema: {
        nest_id: z.string(),
        limit: z.number().int().min(1).max(MAX_PAGE).optional().describe("How many (default 20)."),
      },
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    async (args, extra) => {
      requireScope(principalOfCall(extra), "read");
      return result({ messages: await app.chat.newest(args.nest_id, args.limit ?? 20) });
    },
  );
}

/**
 * Follows a list's stream to list.finished, sending a progress notification per batch of events
 * when asked for (docs/integrations.md "Updates"): every event a line of it.
 */
async function followToEnd(app: App, listId: string, extra: Extra): Promise<void> {
  const items = await app.prisma.item.count({ where: { listId } });
  const progress = new ListProgress(items);
  const token = extra._meta?.progressToken;
  const batches = eventBatches(app.log, listStream(listId), 0, {
    everyMs: app.config.agentUpdateMs,
    urgent: mustSendNow,
    signal: extra.signal,
  });
  for await (const batch of batches) {
    const lines: string[] = [];
    const waits: Array<NonNullable<ReturnType<typeof approvalAsked>>> = [];
    for (const event of batch) {
      const payload = parsedPayload<Record<string, any>>(event);
      lines.push(progress.take(event.name, payload));
      const asked = approvalAsked(event.name, payload);
      if (asked) waits.push(asked);
    }
    if (token !== undefined)
      await extra.sendNotification({
        method: "notifications/progress",
        params: {
          progressToken: token,
          progress: batch[batch.length - 1]!.seq,
          message: `${progress.done}/${items} items done: ${linesOf(lines, "; ")}`,
          // The approvals this batch left waiting, for a client that decides them (decide_approval).
          ...(waits.length > 0 ? { _meta: { [WAITS_META]: waits } } : {}),
        },
      });
    if (progress.finished) return;
  }
}

/** The `_meta` key of a progress notification whose events left approvals waiting: a list of them (docs/integrations.md). */
export const WAITS_META = "crows/waits";
