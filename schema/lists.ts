// Todo lists and their items, read straight from the database through the Prisma plugin, and the
// submitList mutation that hands a list to the flock.
import { builder, principalOfContext } from "./builder.ts";
import { NotFoundError, RateLimitedError } from "../src/base/errors.ts";
import { stringArray } from "../src/base/util/json-column.ts";
import { pageLimit } from "../src/base/util/clamp.ts";
import type { Item as ItemRow } from "../src/generated/prisma/client.ts";
import { checkedMaxSize, keyWhere, keyedConnection, totalCountOf } from "./connection.ts";
import { ItemMode, ItemStage, ListStatus, SkipReason, TaskType } from "./enums.ts";

/** The lists connection's filters as a Prisma where (each uses an index: requester/status, createdAt). */
function listWhere(args: { status?: string | null; requester?: string | null; nestId?: string | null }) {
  return {
    ...(args.status == null ? {} : { status: args.status }),
    ...(args.requester == null ? {} : { requester: args.requester }),
    ...(args.nestId == null ? {} : { nestId: args.nestId }),
  };
}

export const TodoList = builder.prismaObject("TodoList", {
  description: "A todo list the owner (or another requester) handed to the flock.",
  fields: (t) => ({
    id: t.exposeID("id"),
    requester: t.exposeString("requester"),
    nestId: t.exposeString("nestId", { description: "The nest whose crows work the list (default todo)." }),
    text: t.exposeString("text"),
    status: t.field({
      type: ListStatus,
      select: { status: true },
      resolve: (l) => l.status as typeof ListStatus.$inferType,
    }),
    tokenBudget: t.exposeInt("tokenBudget"),
    tokensUsed: t.exposeInt("tokensUsed"),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    finishedAt: t.expose("finishedAt", { type: "DateTime", nullable: true }),
    cancelledAt: t.expose("cancelledAt", {
      type: "DateTime",
      nullable: true,
      description: "When the list was cancelled (cancelList), null when it was not.",
    }),
    items: t.relation("items", { query: { orderBy: { n: "asc" } } }),
  }),
});

// A keyed connection by item number rather than Pothos's relatedConnection: its totalCount is
// Prisma's relation _count, which on SQLite groups the whole Item table (3x slower at 1,000,000
// events, bench/aged-ledger.ts); here the count is the list's own rows on the (listId, n) index.
builder.objectField(TodoList, "itemsConnection", (t) =>
  t.connection(
    {
      type: Item,
      description: "The list's items in order, as a cursor connection (at most 100 a page).",
      resolve: (list, args, ctx) =>
        keyedConnection<ItemRow>(args, {
          name: "item",
          order: "asc",
          keyOf: (item) => item.n,
          read: (range) =>
            ctx.app.prisma.item.findMany({
              where: { listId: list.id, n: keyWhere(range) },
              orderBy: { n: range.descending ? "desc" : "asc" },
              take: range.limit,
            }),
          totalCount: () => ctx.app.prisma.item.count({ where: { listId: list.id } }),
        }),
    },
    {
      name: "TodoListItemsConnection",
      fields: (tc) => ({
        totalCount: tc.int({ nullable: true, description: "The list's items.", resolve: totalCountOf }),
      }),
    },
  ),
);

export const Item = builder.prismaObject("Item", {
  description: "One line of a list: id <list_id>-<n>.",
  fields: (t) => ({
    id: t.exposeID("id"),
    listId: t.exposeID("listId"),
    n: t.exposeInt("n", { description: "Position in the list, from 1." }),
    text: t.exposeString("text"),
    stage: t.field({
      type: ItemStage,
      select: { stage: true },
      resolve: (i) => i.stage as typeof ItemStage.$inferType,
    }),
    mode: t.field({
      type: ItemMode,
      nullable: true,
      description: "Once triaged.",
      select: { mode: true },
      resolve: (i) => i.mode as typeof ItemMode.$inferType | null,
    }),
    taskType: t.field({
      type: TaskType,
      nullable: true,
      description: "Once triaged.",
      select: { taskType: true },
      resolve: (i) => i.taskType as typeof TaskType.$inferType | null,
    }),
    subtasks: t.stringList({ select: { subtasks: true }, resolve: (item) => stringArray(item.subtasks) }),
    reason: t.exposeString("reason", { nullable: true, description: "The Sentry's reason for its triage call." }),
    answer: t.exposeString("answer", { nullable: true }),
    crows: t.stringList({
      description: "The crows that contributed to the answer.",
      select: { crows: true },
      resolve: (item) => stringArray(item.crows),
    }),
    skipReason: t.field({
      type: SkipReason,
      nullable: true,
      select: { skipReason: true },
      resolve: (i) => i.skipReason as typeof SkipReason.$inferType | null,
    }),
    updatedAt: t.expose("updatedAt", { type: "DateTime" }),
    list: t.relation("list"),
    approvals: t.relation("approvals", { query: { orderBy: { createdAt: "asc" } } }),
  }),
});

builder.queryFields((t) => ({
  listsConnection: t.prismaConnection(
    {
      authScopes: { read: true },
      type: "TodoList",
      cursor: "id",
      description:
        "Lists, newest first, as a cursor connection: filter by status, requester and nest (at most 100 a page).",
      args: {
        status: t.arg({ type: ListStatus }),
        requester: t.arg.string(),
        nestId: t.arg.string(),
      },
      maxSize: checkedMaxSize,
      resolve: (query, _root, args, ctx) => {
        return ctx.app.prisma.todoList.findMany({
          ...query,
          where: listWhere(args),
          orderBy: [{ createdAt: "desc" }, { id: "desc" }],
        });
      },
      totalCount: (_root, args, ctx) => ctx.app.prisma.todoList.count({ where: listWhere(args) }),
    },
    { name: "TodoListConnection" },
  ),
  list: t.prismaField({
    authScopes: { read: true },
    type: "TodoList",
    nullable: true,
    description: "One list by id, or null.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) =>
      ctx.app.prisma.todoList.findUnique({ ...query, where: { id: String(args.id) } }),
  }),
  lists: t.prismaField({
    authScopes: { read: true },
    type: ["TodoList"],
    deprecationReason: "Use listsConnection (cursor pages past the newest 100, filters by status and nest).",
    description: "The newest lists first, optionally one requester's.",
    args: {
      requester: t.arg.string(),
      limit: t.arg.int({ defaultValue: 20, description: "1 to 100." }),
    },
    resolve: (query, _root, args, ctx) =>
      ctx.app.prisma.todoList.findMany({
        ...query,
        where: args.requester == null ? {} : { requester: args.requester },
        orderBy: { createdAt: "desc" },
        take: pageLimit(args.limit, 20, 100),
      }),
  }),
}));

/** What submitList returns on success: the new id, and the list row once it is readable. */
const SubmittedList = builder.objectRef<{ listId: string }>("SubmittedList").implement({
  fields: (t) => ({
    listId: t.exposeID("listId"),
    list: t.prismaField({
      type: "TodoList",
      nullable: true,
      resolve: (query, parent, _args, ctx) =>
        ctx.app.prisma.todoList.findUnique({ ...query, where: { id: parent.listId } }),
    }),
  }),
});

builder.mutationFields((t) => ({
  submitList: t.field({
    authScopes: { write: true },
    type: SubmittedList,
    description: "Hands a todo list to the flock (REST: POST /api/lists). Follow it with listEvents.",
    args: {
      text: t.arg.string({ required: true, description: "The list, one item a line." }),
      requester: t.arg.string({ required: true }),
      nestId: t.arg.string({ description: "The nest to work it in; default todo." }),
    },
    errors: { types: [NotFoundError, RateLimitedError], directResult: true },
    resolve: (_root, args, ctx) =>
      ctx.app.flock.submitList({
        text: args.text,
        requester: args.requester,
        nestId: args.nestId ?? undefined,
        actor: principalOfContext(ctx).actor,
      }),
  }),
}));
