// Nests (docs/contract.md "Nests"): rooms with a core of crows, read through the Prisma plugin, and the
// createNest mutation, which goes through the same nest store (and guardrails) as POST /api/nests.
import { builder } from "./builder.ts";
import { BadInputError, ConflictError } from "../src/base/errors.ts";
import { ROSTER } from "../src/base/roster.ts";
import { DEFAULT_NEST } from "../src/nests/store.ts";
import { pageLimit } from "../src/base/util/clamp.ts";

export const Nest = builder.prismaObject("Nest", {
  description: "A room where a team of crows works. The default nest todo has an empty core.",
  fields: (t) => ({
    id: t.exposeID("id", { description: "The nest_id: a slug of the name." }),
    name: t.exposeString("name"),
    crows: t.stringList({
      description: "The core crows in order; borrowing fills a flight from the rest of the flock.",
      select: { members: { orderBy: { position: "asc" }, select: { crow: true } } },
      resolve: (nest) => (nest.id === DEFAULT_NEST ? [] : nest.members.map((m) => m.crow)),
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    lists: t.prismaField({
      type: ["TodoList"],
      description: "The lists worked in this nest, newest first.",
      args: { limit: t.arg.int({ defaultValue: 20, description: "1 to 100." }) },
      select: { id: true },
      resolve: (query, nest, args, ctx) =>
        ctx.app.prisma.todoList.findMany({
          ...query,
          where: { nestId: nest.id },
          orderBy: { createdAt: "desc" },
          take: pageLimit(args.limit, 20, 100),
        }),
    }),
  }),
});

builder.queryFields((t) => ({
  nests: t.prismaField({
    authScopes: { read: true },
    type: ["Nest"],
    description: "Every nest: todo first, then in the order they were created (REST: GET /api/nests).",
    resolve: async (query, _root, _args, ctx) => {
      const rows = await ctx.app.prisma.nest.findMany({ ...query, orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
      return [...rows.filter((n) => n.id === DEFAULT_NEST), ...rows.filter((n) => n.id !== DEFAULT_NEST)];
    },
  }),
  nest: t.prismaField({
    authScopes: { read: true },
    type: "Nest",
    nullable: true,
    description: "One nest by nest_id, or null.",
    args: { id: t.arg.id({ required: true }) },
    resolve: (query, _root, args, ctx) => ctx.app.prisma.nest.findUnique({ ...query, where: { id: String(args.id) } }),
  }),
  roster: t.stringList({
    authScopes: { read: true },
    description: "The 8 working crows in order (never Sentry, Elder, Quill or Boss).",
    resolve: () => [...ROSTER],
  }),
}));

builder.mutationFields((t) => ({
  createNest: t.prismaField({
    authScopes: { write: true },
    type: "Nest",
    description:
      "Creates a nest (REST: POST /api/nests). BadInputError for a broken guardrail (name 1-40 characters, 1-8 roster or spun crows, no duplicates, no service roles, at most 20 nests, todo included); ConflictError when the nest_id is taken.",
    args: {
      name: t.arg.string({ required: true }),
      crows: t.arg.stringList({ required: true }),
    },
    errors: { types: [BadInputError, ConflictError], directResult: true },
    resolve: async (query, _root, args, ctx) => {
      const nest = await ctx.app.nests.create({ name: args.name, crows: args.crows });
      return ctx.app.prisma.nest.findUniqueOrThrow({ ...query, where: { id: nest.id } });
    },
  }),
}));
