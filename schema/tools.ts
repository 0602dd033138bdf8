// Tool servers in GraphQL, the same as REST's /api/tools/servers (docs/tools.md "Connecting
// servers"): the servers with their state and tools, and the mutations that add, remove and set
// policies and nests. Every field asks the admin scope (per operation in the scopes plugin, and
// again here). env and header values are write-only: only their names come back. A policy and a
// status are Strings here (allow/ask/deny; idle/starting/up/down/stopped), as REST carries them.
import { builder, principalOfContext, type Context } from "./builder.ts";
import { BadInputError, ConflictError, ForbiddenError, NotFoundError } from "../src/base/errors.ts";
import { requireScope } from "../src/access/principal.ts";
import type { ToolServerStatus } from "../src/tools/catalog.ts";
import type { ServerState } from "../src/tools/connection.ts";

const admin = (ctx: Context) => requireScope(principalOfContext(ctx), "admin");

type ToolView = ToolServerStatus["tools"][number];

const ToolServerStateRef = builder.objectRef<ServerState>("ToolServerState").implement({
  description: "A tool server's process or connection as this instance sees it.",
  fields: (t) => ({
    status: t.exposeString("status", { description: "idle (not started yet), starting, up, down, stopped." }),
    lastError: t.exposeString("last_error", { nullable: true, description: "What went wrong last (never a secret)." }),
    lastErrorAt: t.expose("last_error_at", { type: "DateTime", nullable: true }),
    tools: t.exposeInt("tools", { nullable: true, description: "Tools offered after the caps; null until listed." }),
    toolsDropped: t.exposeInt("tools_dropped", {
      description: "Tools left out: past the count cap, schema too large, bad name.",
    }),
    calls: t.exposeInt("calls"),
    errors: t.exposeInt("errors", { description: "Calls that failed or that the tool answered as an error." }),
    restarts: t.exposeInt("restarts"),
    startedAt: t.expose("started_at", { type: "DateTime", nullable: true }),
  }),
});

const ToolRef = builder.objectRef<ToolView>("Tool").implement({
  description: "A tool a server offers, with the policy it runs under.",
  fields: (t) => ({
    name: t.exposeString("name"),
    description: t.exposeString("description"),
    policy: t.exposeString("policy", { description: "allow, ask or deny: the owner's choice, else the default." }),
    defaultPolicy: t.exposeString("default_policy", {
      description: "From its annotations: readOnlyHint true is allow, else ask.",
    }),
    readOnlyHint: t.boolean({ nullable: true, resolve: (tool) => tool.annotations.readOnlyHint ?? null }),
    destructiveHint: t.boolean({ nullable: true, resolve: (tool) => tool.annotations.destructiveHint ?? null }),
  }),
});

const ToolPolicyOverrideRef = builder.objectRef<{ tool: string; policy: string }>("ToolPolicyOverride").implement({
  fields: (t) => ({ tool: t.exposeString("tool"), policy: t.exposeString("policy") }),
});

const ToolServerRef = builder.objectRef<ToolServerStatus>("ToolServer").implement({
  description: "An MCP server the owner connected. Secrets (env and header values) are never shown: only their names.",
  fields: (t) => ({
    id: t.exposeID("id"),
    name: t.exposeString("name"),
    transport: t.exposeString("transport", { description: "stdio or http (Streamable HTTP)." }),
    command: t.exposeString("command"),
    args: t.exposeStringList("args"),
    cwd: t.exposeString("cwd", { description: "Empty: a folder of its own under the data folder." }),
    url: t.exposeString("url"),
    envNames: t.exposeStringList("env_names"),
    headerNames: t.exposeStringList("header_names"),
    nests: t.exposeStringList("nests", { nullable: true, description: "null: every nest may use it." }),
    policies: t.field({
      type: [ToolPolicyOverrideRef],
      description: "The owner's choices; a tool not named has its default.",
      resolve: (s) => Object.entries(s.policies).map(([tool, policy]) => ({ tool, policy })),
    }),
    createdAt: t.expose("created_at", { type: "DateTime" }),
    state: t.field({ type: ToolServerStateRef, resolve: (s) => s.state }),
    tools: t.field({
      type: [ToolRef],
      description: "As last listed (toolServer lists them, starting the server).",
      resolve: (s) => s.tools,
    }),
  }),
});

const NameValue = builder.inputType("NameValueInput", {
  description: "One environment variable or header: the value is write-only.",
  fields: (t) => ({ name: t.string({ required: true }), value: t.string({ required: true }) }),
});

const ToolPolicyInput = builder.inputType("ToolPolicyInput", {
  fields: (t) => ({
    tool: t.string({ required: true }),
    policy: t.string({ description: "allow, ask or deny; null puts the tool back on its default." }),
  }),
});

const objectOf = (pairs: ReadonlyArray<{ name: string; value: string }> | null | undefined) =>
  pairs ? Object.fromEntries(pairs.map((p) => [p.name, p.value])) : undefined;

const refusals = () => ({ types: [BadInputError, NotFoundError, ForbiddenError], directResult: true as const });

builder.queryFields((t) => ({
  toolServers: t.field({
    authScopes: { admin: true },
    type: [ToolServerRef],
    description: "Every tool server with its state, oldest first (REST: GET /api/tools/servers). Admin scope.",
    errors: { types: [ForbiddenError] },
    resolve: (_root, _args, ctx) => (admin(ctx), ctx.app.tools.statuses()),
  }),
  toolServer: t.field({
    authScopes: { admin: true },
    type: ToolServerRef,
    description: "One tool server with its tools listed, starting it if needed (REST: GET /api/tools/servers/{id}).",
    args: { id: t.arg.id({ required: true }) },
    errors: refusals(),
    resolve: (_root, args, ctx) => (admin(ctx), ctx.app.tools.status(String(args.id), { list: true })),
  }),
}));

builder.mutationFields((t) => ({
  addToolServer: t.field({
    authScopes: { admin: true },
    type: ToolServerRef,
    description:
      "Connects a tool server (REST: POST /api/tools/servers): a command (stdio) or a url (Streamable HTTP).",
    args: {
      name: t.arg.string({ required: true }),
      command: t.arg.string(),
      args: t.arg.stringList(),
      env: t.arg({ type: [NameValue] }),
      cwd: t.arg.string(),
      url: t.arg.string(),
      headers: t.arg({ type: [NameValue] }),
      nests: t.arg.stringList({ description: "The nests that may use it; none: every nest." }),
    },
    errors: { types: [BadInputError, ConflictError, ForbiddenError], directResult: true },
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      const view = await ctx.app.tools.registry.add(
        {
          name: args.name,
          command: args.command ?? undefined,
          args: args.args ?? undefined,
          env: objectOf(args.env),
          cwd: args.cwd ?? undefined,
          url: args.url ?? undefined,
          headers: objectOf(args.headers),
          nests: args.nests ?? undefined,
        },
        principalOfContext(ctx).actor,
      );
      return ctx.app.tools.status(view.id);
    },
  }),
  removeToolServer: t.field({
    authScopes: { admin: true },
    type: "Boolean",
    description: "Removes a tool server and stops it (REST: DELETE /api/tools/servers/{id}).",
    args: { id: t.arg.id({ required: true }) },
    errors: { types: [BadInputError, NotFoundError, ForbiddenError] },
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      await ctx.app.tools.registry.remove(String(args.id), principalOfContext(ctx).actor);
      return true;
    },
  }),
  setToolPolicies: t.field({
    authScopes: { admin: true },
    type: ToolServerRef,
    description: "Sets tools' policies (REST: POST /api/tools/servers/{id}/policies); audited.",
    args: { id: t.arg.id({ required: true }), policies: t.arg({ type: [ToolPolicyInput], required: true }) },
    errors: refusals(),
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      const changes = Object.fromEntries(args.policies.map((p) => [p.tool, p.policy ?? null]));
      await ctx.app.tools.registry.setPolicies(String(args.id), changes, principalOfContext(ctx).actor);
      return ctx.app.tools.status(String(args.id));
    },
  }),
  setToolServerNests: t.field({
    authScopes: { admin: true },
    type: ToolServerRef,
    description: "Which nests may use a server (REST: POST /api/tools/servers/{id}/nests); null: every nest.",
    args: { id: t.arg.id({ required: true }), nests: t.arg.stringList() },
    errors: refusals(),
    resolve: async (_root, args, ctx) => {
      admin(ctx);
      await ctx.app.tools.registry.setNests(String(args.id), args.nests ?? null, principalOfContext(ctx).actor);
      return ctx.app.tools.status(String(args.id));
    },
  }),
}));
