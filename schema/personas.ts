// The persona crows (docs/flock.md §2): the eight workers and the four service roles.
import { builder } from "./builder.ts";
import { PERSONAS, SERVICE_ROLE_NAMES, type Persona as PersonaShape } from "../src/base/roster.ts";

export const Persona = builder.objectRef<PersonaShape>("Persona").implement({
  fields: (t) => ({
    name: t.exposeString("name"),
    epithet: t.exposeString("epithet"),
    strength: t.exposeString("strength"),
    backstory: t.exposeString("backstory"),
    serviceRole: t.boolean({
      description: "Sentry, Elder, Quill and Boss serve every nest and are never members.",
      resolve: (p) => SERVICE_ROLE_NAMES.includes(p.name),
    }),
  }),
});

builder.queryFields((t) => ({
  personas: t.field({
    authScopes: { read: true },
    type: [Persona],
    description: "Every persona crow, workers first (REST: GET /api/personas).",
    resolve: () => [...PERSONAS],
  }),
  persona: t.field({
    authScopes: { read: true },
    type: Persona,
    nullable: true,
    args: { name: t.arg.string({ required: true }) },
    resolve: (_root, args) => PERSONAS.find((p) => p.name === args.name) ?? null,
  }),
}));
