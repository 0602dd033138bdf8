// Spun crows (docs/contract.md "Spun crows") and every crow's trust across task types, plus spinCrow:
// the registry write Boss's SPIN order makes, through the same registry (and guardrails).
//
// Owner-only: there is no login yet (docs/contract.md: requester names are self-asserted), so "the owner"
// is whoever can reach the server, which listens on localhost only by default. spinCrow therefore
// relies on that boundary; it grants nothing beyond what Boss's order could, and the registry's
// guardrails (cap, name clashes, persona, trust clamped to regular) hold whoever calls it.
import { builder } from "./builder.ts";
import { ErrorInterface } from "./errors.ts";
import { Persona } from "./personas.ts";
import type { Context } from "./builder.ts";
import { TASK_TYPES, personaOf } from "../src/base/roster.ts";
import { LEVEL_NAMES } from "../src/flock/trust.ts";
import { LevelName, StartingTrust } from "./enums.ts";
import { SpinBadInputError, SpinNameTakenError, compareNames } from "../src/nests/registry.ts";

interface CrowTrustShape {
  holder: string;
  taskType: string;
  level: number;
  streak: number;
  recorded: boolean;
}

const CrowTrust = builder.objectRef<CrowTrustShape>("CrowTrust").implement({
  description: "A crow's standing on one task type: its ledger record, or where it would start without one.",
  fields: (t) => ({
    holder: t.exposeString("holder"),
    taskType: t.exposeString("taskType"),
    level: t.exposeInt("level", { description: "0 stranger, 1 regular, 2 trusted." }),
    levelName: t.field({ type: LevelName, resolve: (r) => LEVEL_NAMES[r.level] ?? "stranger" }),
    streak: t.exposeInt("streak", { description: "Approvals in a row since the last level change." }),
    recorded: t.exposeBoolean("recorded", {
      description: "False when no verdict has touched it yet (the starting level).",
    }),
  }),
});

/** One entry per task type, plus any other record the holder has (the Sentry's triage/watch). */
async function trustAcross(holder: string, ctx: Context): Promise<CrowTrustShape[]> {
  const rows = await ctx.app.prisma.trust.findMany({ where: { holder }, orderBy: { taskType: "asc" } });
  const out: CrowTrustShape[] = [];
  for (const taskType of TASK_TYPES) {
    const row = rows.find((r) => r.taskType === taskType);
    out.push(
      row
        ? { holder, taskType, level: row.level, streak: row.streak, recorded: true }
        : { holder, taskType, level: await ctx.app.flock.trust.level(holder, taskType), streak: 0, recorded: false },
    );
  }
  for (const row of rows) {
    if (!(TASK_TYPES as readonly string[]).includes(row.taskType)) {
      out.push({ holder, taskType: row.taskType, level: row.level, streak: row.streak, recorded: true });
    }
  }
  return out;
}

builder.objectField(Persona, "trust", (t) =>
  t.field({
    type: [CrowTrust],
    description: "This persona crow's trust on every task type.",
    resolve: (persona, _args, ctx) => trustAcross(persona.name, ctx),
  }),
);

export const SpunCrow = builder.prismaObject("SpunCrow", {
  description: "A crow Boss spun up: an ordinary crow running on a working persona's habits.",
  fields: (t) => ({
    name: t.exposeString("name"),
    persona: t.exposeString("persona", { description: "The working persona it runs on." }),
    personaDetail: t.field({
      type: Persona,
      nullable: true,
      select: { persona: true },
      resolve: (crow) => personaOf(crow.persona) ?? null,
    }),
    startingTrust: t.field({
      type: StartingTrust,
      select: { trust: true },
      resolve: (c) => c.trust as typeof StartingTrust.$inferType,
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
    trust: t.field({
      type: [CrowTrust],
      description: "Its trust on every task type.",
      select: { name: true },
      resolve: (crow, _args, ctx) => trustAcross(crow.name, ctx),
    }),
  }),
});

builder.queryFields((t) => ({
  crows: t.prismaField({
    authScopes: { read: true },
    type: ["SpunCrow"],
    description: "The spun-crow registry only (never persona crows), sorted by name (REST: GET /api/crows).",
    resolve: async (query, _root, _args, ctx) => {
      const rows = await ctx.app.prisma.spunCrow.findMany({ ...query });
      return rows.sort((a, b) => compareNames(a.name, b.name));
    },
  }),
  crow: t.prismaField({
    authScopes: { read: true },
    type: "SpunCrow",
    nullable: true,
    description: "One spun crow by name, or null.",
    args: { name: t.arg.string({ required: true }) },
    resolve: (query, _root, args, ctx) => ctx.app.prisma.spunCrow.findUnique({ ...query, where: { name: args.name } }),
  }),
}));

const reasonDescription =
  "Stable refusal reason Boss says: cap reached, name taken, persona unknown, name invalid or trust invalid.";

builder.objectType(SpinBadInputError, {
  name: "SpinRefusedError",
  description: "A spin that breaks a registry guardrail (REST-style: 400).",
  interfaces: [ErrorInterface],
  fields: (t) => ({ reason: t.exposeString("reason", { description: reasonDescription }) }),
});

builder.objectType(SpinNameTakenError, {
  name: "SpinNameTakenError",
  description: "A spin whose name collides with the roster, a service role or the registry (REST-style: 409).",
  interfaces: [ErrorInterface],
  fields: (t) => ({ reason: t.exposeString("reason", { description: reasonDescription }) }),
});

builder.mutationFields((t) => ({
  spinCrow: t.prismaField({
    authScopes: { write: true },
    type: "SpunCrow",
    description:
      "Adds a crow to the registry: the write Boss's SPIN order makes. Owner-only by reach: there is no login yet, and the server listens on localhost only by default. A requested trusted starts as regular.",
    args: {
      name: t.arg.string({ required: true }),
      persona: t.arg.string({ required: true, description: "One of the 8 working crows." }),
      trust: t.arg.string({ description: "stranger (default) or regular; trusted is clamped to regular." }),
    },
    errors: { types: [SpinBadInputError, SpinNameTakenError], directResult: true },
    resolve: async (query, _root, args, ctx) => {
      const crow = await ctx.app.registry.spin({
        name: args.name,
        persona: args.persona,
        trust: args.trust ?? undefined,
      });
      return ctx.app.prisma.spunCrow.findUniqueOrThrow({ ...query, where: { name: crow.name } });
    },
  }),
}));
