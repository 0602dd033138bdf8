// The nest store (docs/contract.md "Nests"): rooms with a core of crows. Creating one enforces every
// guardrail; the default nest `todo` (empty core: its crows are the whole flock) always exists.
// REST, GraphQL and Boss's NEST order all create through here.
//
// Decisions where the contract is silent (docs/nests.md):
// - "At most 20 nests" counts every nest, `todo` included: GET /api/nests never lists more than 20,
//   so the owner can create 19.
// - The slug folds accents ("Café" -> "cafe") before dropping other characters; a name with no
//   letter or digit left has no slug and is a 400.
// - Crow names are exact ("pepper" is not Pepper); the message suggests the right spelling.
// - Guardrails are checked in order: name, crows, slug clash (409), cap (400).
import type { PrismaClient } from "../generated/prisma/client.ts";
import { BadInputError, ConflictError, NotFoundError } from "../base/errors.ts";
import { DEFAULT_NEST } from "../base/default-nest.ts";
import { ROSTER, SERVICE_ROLE_NAMES } from "../base/roster.ts";
import { KeyedLock } from "../base/util/keyed-lock.ts";

export { DEFAULT_NEST };
export const DEFAULT_NEST_NAME = "todo";
/** Every nest counts, todo included. */
export const MAX_NESTS = 20;
export const MAX_NEST_NAME = 40;
export const MAX_CORE = 8;

export interface NestRecord {
  id: string;
  name: string;
  /** The core, in the order given at creation. */
  crows: string[];
}

export interface CreateNestInput {
  name: unknown;
  crows: unknown;
}

/** The nest_id a name gets: lowercase a-z0-9 and single dashes, no dash at either end. */
export function slugOf(name: string): string {
  return name
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "");
}

export class NestStore {
  // One create at a time in this process: the clash and cap checks must not interleave.
  private readonly lock = new KeyedLock();

  constructor(private readonly prisma: PrismaClient) {}

  /** Makes sure `todo` exists (nest messages in it need the row); safe to call at every start. */
  async ensureDefault(): Promise<void> {
    await this.prisma.nest.upsert({
      where: { id: DEFAULT_NEST },
      create: { id: DEFAULT_NEST, name: DEFAULT_NEST_NAME },
      update: {},
    });
  }

  /** `todo` first, then the owner's nests in the order they were created. */
  async list(): Promise<NestRecord[]> {
    const rows = await this.prisma.nest.findMany({
      include: { members: { orderBy: { position: "asc" } } },
      orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    });
    const nests = rows.map(toRecord);
    const todo = nests.find((n) => n.id === DEFAULT_NEST) ?? { id: DEFAULT_NEST, name: DEFAULT_NEST_NAME, crows: [] };
    return [todo, ...nests.filter((n) => n.id !== DEFAULT_NEST)];
  }

  async get(id: string): Promise<NestRecord | null> {
    if (id === DEFAULT_NEST) return { id, name: DEFAULT_NEST_NAME, crows: [] };
    const row = await this.prisma.nest.findUnique({
      where: { id },
      include: { members: { orderBy: { position: "asc" } } },
    });
    return row ? toRecord(row) : null;
  }

  /** The nest, or a NotFoundError naming it. */
  async require(id: string): Promise<NestRecord> {
    const nest = await this.get(id);
    if (!nest) throw new NotFoundError(`No nest "${id}".`);
    return nest;
  }

  async create(input: CreateNestInput): Promise<NestRecord> {
    const name = checkNestName(input.name);
    const id = slugOf(name);
    const crows = checkCrowShape(input.crows);
    return this.lock.run("nests", () =>
      this.prisma.$transaction(async (tx) => {
        const spun = (await tx.spunCrow.findMany({ select: { name: true } })).map((r) => r.name);
        checkCrowNames(crows, spun);
        const clash = id === DEFAULT_NEST ? { name: DEFAULT_NEST_NAME } : await tx.nest.findUnique({ where: { id } });
        if (clash)
          throw new ConflictError(`A nest with nest_id "${id}" already exists ("${clash.name}"); pick another name.`);
        // todo always exists (ensureDefault), so it is counted whether or not its row is there yet.
        const existing = 1 + (await tx.nest.count({ where: { id: { not: DEFAULT_NEST } } }));
        if (existing >= MAX_NESTS) {
          throw new BadInputError(`At most ${MAX_NESTS} nests, todo included; there are already ${existing}.`);
        }
        await tx.nest.create({
          data: { id, name, members: { create: crows.map((crow, position) => ({ crow, position })) } },
        });
        return { id, name, crows };
      }),
    );
  }

  /** Takes a crow out of a nest's core (the owner's "retire" of a persona crow). False if it was not there. */
  async removeMember(nestId: string, crow: string): Promise<boolean> {
    const removed = await this.prisma.nestMember.deleteMany({ where: { nestId, crow } });
    return removed.count > 0;
  }
}

function toRecord(row: { id: string; name: string; members: { crow: string }[] }): NestRecord {
  return { id: row.id, name: row.name, crows: row.id === DEFAULT_NEST ? [] : row.members.map((m) => m.crow) };
}

/** A nest's name, trimmed, with a slug to be its nest_id (the REST record runs this too: compat/nests.ts). */
export function checkNestName(raw: unknown): string {
  if (typeof raw !== "string") throw new BadInputError("name must be a string.");
  const name = raw.trim();
  const length = [...name].length;
  if (length < 1 || length > MAX_NEST_NAME) {
    throw new BadInputError(`name must be 1-${MAX_NEST_NAME} characters after trimming, got ${length}.`);
  }
  if (slugOf(name) === "") throw new BadInputError(`name "${name}" has no letters or digits to make a nest_id from.`);
  return name;
}

/** The crew's shape: 1-MAX_CORE names, each once (whether they are crows is checked against the roster). */
export function checkCrowShape(raw: unknown): string[] {
  if (!Array.isArray(raw)) throw new BadInputError(`crows must be an array of 1-${MAX_CORE} crow names.`);
  if (raw.length < 1 || raw.length > MAX_CORE) {
    throw new BadInputError(`crows must name 1-${MAX_CORE} crows, got ${raw.length}.`);
  }
  for (const crow of raw) {
    if (typeof crow !== "string") throw new BadInputError("crows must be crow names (strings).");
  }
  const crows = raw as string[];
  const seen = new Set<string>();
  for (const crow of crows) {
    if (seen.has(crow)) throw new BadInputError(`crows names ${crow} twice; each crow may appear once.`);
    seen.add(crow);
  }
  return crows;
}

function checkCrowNames(crows: string[], spun: string[]): void {
  const known = [...ROSTER, ...spun];
  for (const crow of crows) {
    const role = SERVICE_ROLE_NAMES.find((r) => r.toLowerCase() === crow.toLowerCase());
    if (role) throw new BadInputError(`${role} is a service role: it serves every nest and is never a core member.`);
    if (known.includes(crow)) continue;
    const near = known.find((k) => k.toLowerCase() === crow.trim().toLowerCase());
    const hint = near ? ` Did you mean "${near}"?` : ` Crows are the roster (${ROSTER.join(", ")}) or spun crows.`;
    throw new BadInputError(`"${crow}" is not a crow in the flock.${hint}`);
  }
}
