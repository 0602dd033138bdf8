// The spun-crow registry (docs/contract.md "Spun crows"): crows Boss creates, each a name, a working persona
// and a starting trust; once spun, an ordinary crow. Every refusal carries a stable `reason`
// (SPIN_REFUSALS), and the rules where the contract is silent (name clashes, case, former crows'
// names, trust clamping, checking the requester's own words) are in docs/nests.md "Spun crows".
import type { PrismaClient } from "../generated/prisma/client.ts";
import { BadInputError, ConflictError } from "../base/errors.ts";
import { ROSTER, SERVICE_ROLE_NAMES } from "../base/roster.ts";
import { KeyedLock } from "../base/util/keyed-lock.ts";
import { SERVER_VOICE } from "./message.ts";

export const SPIN_REFUSALS = {
  capReached: "cap reached",
  nameTaken: "name taken",
  personaUnknown: "persona unknown",
  nameInvalid: "name invalid",
  trustInvalid: "trust invalid",
} as const;
export type SpinRefusalReason = (typeof SPIN_REFUSALS)[keyof typeof SPIN_REFUSALS];

/** A broken spin guardrail (400); `reason` is what Boss says. */
export class SpinBadInputError extends BadInputError {
  constructor(
    readonly reason: SpinRefusalReason,
    message: string,
  ) {
    super(message);
  }
}

/** A spin whose name is taken (409); `reason` is always "name taken". */
export class SpinNameTakenError extends ConflictError {
  readonly reason: SpinRefusalReason = SPIN_REFUSALS.nameTaken;
}

/** The refusal reason of an error spin() threw, or undefined for anything else. */
export function spinRefusalReason(error: unknown): SpinRefusalReason | undefined {
  return error instanceof SpinBadInputError || error instanceof SpinNameTakenError ? error.reason : undefined;
}

export const SPUN_TRUST = ["stranger", "regular"] as const;
export type SpunTrust = (typeof SPUN_TRUST)[number];
export const MAX_CROW_NAME = 40;
/** Names the flock already uses for something that is not a crow (authors, ledger holders). */
export const RESERVED_NAMES: readonly string[] = ["owner", "flock", SERVER_VOICE];

export interface SpunCrowRecord {
  name: string;
  persona: string;
  trust: SpunTrust;
}

export interface SpinInput {
  name: unknown;
  persona: unknown;
  trust?: unknown;
}

/** What a spin request's own words ask for, when they say it explicitly. */
export interface RequestedSpinTerms {
  persona?: string;
  trust?: string;
}

// Words the patterns below can catch that are never a persona's name ("a new persona", "persona is").
const NOT_A_NAME = new Set(
  [
    "a",
    "an",
    "the",
    "new",
    "its",
    "their",
    "his",
    "her",
    "my",
    "your",
    "our",
    "same",
    "any",
    "some",
    "this",
    "that",
    "own",
    "other",
    "different",
  ].concat(["crow", "is", "be", "and", "or", "for", "with", "to", "please", "named", "called", "it", "one", "of"]),
);
const WORD = "([\\p{L}][\\p{L}\\p{N}_-]*)";
const PERSONA_PATTERNS: readonly RegExp[] = [
  // "persona Gandalf", "persona: Gandalf", "persona of Gandalf", "persona \"Gandalf\""
  new RegExp(`\\bpersona\\s*(?:of\\s+|:\\s*|=\\s*|is\\s+|should be\\s+)?["'“]?${WORD}`, "iu"),
  // "the Gandalf persona", "Gandalf's persona"
  new RegExp(`${WORD}(?:'s)?\\s+persona\\b`, "iu"),
  // "on Gandalf's habits", "with Gandalf's style"
  new RegExp(`\\b(?:on|with|using)\\s+${WORD}'s\\s+(?:habits|style|ways|voice|personality|persona)\\b`, "iu"),
  // "based on Gandalf", "backed by Gandalf", "modelled on Gandalf", "running on Gandalf"
  new RegExp(`\\b(?:based on|backed by|modell?ed on|modeled after|running on|runs on|built on)\\s+["'“]?${WORD}`, "iu"),
  // "a crow named Zed on Gandalf": a capitalised name right after "on"
  /\bon\s+(\p{Lu}[\p{L}\p{N}_-]*)/u,
];

/**
 * The persona and trust a spin request names in so many words, or nothing for what it leaves
 * unsaid. Trust: the lowest level the words mention ("trusted" still ends up regular: the registry
 * clamps it), so a request that mentions two levels never gains by it.
 */
export function requestedSpinTerms(text: string): RequestedSpinTerms {
  const terms: RequestedSpinTerms = {};
  for (const pattern of PERSONA_PATTERNS) {
    const word = pattern.exec(text)?.[1];
    if (word !== undefined && !NOT_A_NAME.has(word.toLowerCase())) {
      terms.persona = word;
      break;
    }
  }
  for (const level of ["stranger", "regular", "trusted"] as const) {
    if (new RegExp(`\\b${level}\\b`, "i").test(text)) {
      terms.trust = level;
      break;
    }
  }
  return terms;
}

// Letters and digits first, then letters, digits, spaces and - _ . '
const NAME_PATTERN = /^[\p{L}\p{N}][\p{L}\p{N} _.'-]*$/u;

export class CrowRegistry {
  // One spin or retire at a time in this process: the cap check and the insert must not interleave.
  private readonly lock = new KeyedLock();

  constructor(
    private readonly prisma: PrismaClient,
    readonly maxSpun: number,
  ) {}

  /** Every spun crow, sorted by name (case-insensitively, so "ada" sits before "Bryn"). */
  async list(): Promise<SpunCrowRecord[]> {
    const rows = await this.prisma.spunCrow.findMany();
    return rows.map(toRecord).sort((a, b) => compareNames(a.name, b.name));
  }

  async get(name: string): Promise<SpunCrowRecord | null> {
    const row = await this.prisma.spunCrow.findUnique({ where: { name } });
    return row ? toRecord(row) : null;
  }

  /** Adds a crow to the registry, or throws a SpinBadInputError / SpinNameTakenError. */
  async spin(input: SpinInput): Promise<SpunCrowRecord> {
    const name = checkName(input.name);
    const persona = checkPersona(input.persona);
    const trust = checkTrust(input.trust);
    return this.lock.run("registry", () =>
      this.prisma.$transaction(async (tx) => {
        const taken = takenBecause(
          name,
          (await tx.spunCrow.findMany({ select: { name: true } })).map((r) => r.name),
        );
        if (taken) throw new SpinNameTakenError(`name taken: "${name}" ${taken}.`);
        const history =
          (await tx.trust.findFirst({ where: { holder: name } })) ??
          (await tx.trustEntry.findFirst({ where: { holder: name } })) ??
          (await tx.quarantine.findFirst({ where: { crow: name } }));
        if (history)
          throw new SpinNameTakenError(`name taken: "${name}" was a crow before, and its record stays on the books.`);
        const count = await tx.spunCrow.count();
        if (count >= this.maxSpun) {
          throw new SpinBadInputError(
            SPIN_REFUSALS.capReached,
            `cap reached: the registry holds ${count} spun crows and allows at most ${this.maxSpun} (CROWS_MAX_SPUN).`,
          );
        }
        return toRecord(await tx.spunCrow.create({ data: { name, persona, trust } }));
      }),
    );
  }

  /**
   * Retires a spun crow: removes it from the registry and from every nest's core (a retired crow
   * must not be picked). Its ledger and quarantine records stay. False when there was no such crow.
   */
  delete(name: string): Promise<boolean> {
    return this.lock.run("registry", () =>
      this.prisma.$transaction(async (tx) => {
        const removed = await tx.spunCrow.deleteMany({ where: { name } });
        if (removed.count === 0) return false;
        await tx.nestMember.deleteMany({ where: { crow: name } });
        return true;
      }),
    );
  }
}

function toRecord(row: { name: string; persona: string; trust: string }): SpunCrowRecord {
  return { name: row.name, persona: row.persona, trust: row.trust === "regular" ? "regular" : "stranger" };
}

/** Registry order: by name case-insensitively ("ada" before "Bryn"), then by code unit. */
export function compareNames(a: string, b: string): number {
  const la = a.toLowerCase();
  const lb = b.toLowerCase();
  if (la !== lb) return la < lb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}

function checkName(raw: unknown): string {
  if (typeof raw !== "string")
    throw new SpinBadInputError(SPIN_REFUSALS.nameInvalid, "name invalid: name must be a string.");
  const name = raw.trim();
  const length = [...name].length;
  if (length < 1 || length > MAX_CROW_NAME) {
    throw new SpinBadInputError(
      SPIN_REFUSALS.nameInvalid,
      `name invalid: name must be 1-${MAX_CROW_NAME} characters after trimming, got ${length}.`,
    );
  }
  if (!NAME_PATTERN.test(name)) {
    throw new SpinBadInputError(
      SPIN_REFUSALS.nameInvalid,
      "name invalid: name must start with a letter or digit and use only letters, digits, spaces and - _ . '",
    );
  }
  return name;
}

// Why `name` is taken, or undefined when it is free.
function takenBecause(name: string, registry: string[]): string | undefined {
  const key = name.toLowerCase();
  const roster = ROSTER.find((n) => n.toLowerCase() === key);
  if (roster) return `collides with the roster crow ${roster}`;
  const role = SERVICE_ROLE_NAMES.find((n) => n.toLowerCase() === key);
  if (role) return `collides with the service role ${role}`;
  if (RESERVED_NAMES.includes(key)) return `is reserved`;
  const spun = registry.find((n) => n.toLowerCase() === key);
  if (spun) return `collides with the spun crow ${spun}`;
  return undefined;
}

function checkPersona(raw: unknown): string {
  const persona =
    typeof raw === "string" ? ROSTER.find((n) => n.toLowerCase() === raw.trim().toLowerCase()) : undefined;
  if (!persona) {
    const shown = typeof raw === "string" ? `"${raw}"` : "a non-string";
    throw new SpinBadInputError(
      SPIN_REFUSALS.personaUnknown,
      `persona unknown: ${shown} is not one of the working crows (${ROSTER.join(", ")}).`,
    );
  }
  return persona;
}

// Earned trust can't be minted: "trusted" starts the crow as a regular.
function checkTrust(raw: unknown): SpunTrust {
  if (raw === undefined || raw === null) return "stranger";
  const trust = typeof raw === "string" ? raw.trim().toLowerCase() : undefined;
  if (trust === "stranger" || trust === "regular") return trust;
  if (trust === "trusted") return "regular";
  throw new SpinBadInputError(
    SPIN_REFUSALS.trustInvalid,
    'trust invalid: trust must be "stranger" or "regular" ("trusted" is clamped to "regular").',
  );
}
