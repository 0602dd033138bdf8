// Who may post in a nest, and who is quarantined (docs/nests-chat.md "Who may post").
import type { PrismaClient } from "../generated/prisma/client.ts";
import { BadInputError } from "../base/errors.ts";
import { ROSTER, SERVICE_ROLE_NAMES } from "../base/roster.ts";
import { DEFAULT_NEST, type NestRecord } from "./store.ts";
import { SERVER_VOICE } from "./message.ts";

/** A quarantine's status: quarantined until the owner's exact reinstate, then reinstated (src/nests/asks.ts). */
export const QUARANTINE_STATUSES = ["quarantined", "reinstated"] as const;
export type QuarantineStatus = (typeof QUARANTINE_STATUSES)[number];

/** Service roles that may post ask_owner without being members. */
export const ASK_ROLES: readonly string[] = ["Quill", "Sentry"];

export class Membership {
  constructor(private readonly prisma: PrismaClient) {}

  /**
   * Who may post in a nest besides the owner: its core, or for `todo` the whole flock (roster, then
   * spun crows) less persona crows the owner retired from it.
   */
  async members(nest: NestRecord): Promise<string[]> {
    if (nest.id !== DEFAULT_NEST) return nest.crows;
    const [spun, retired] = await Promise.all([
      this.prisma.spunCrow.findMany({ orderBy: { name: "asc" }, select: { name: true } }),
      this.prisma.quarantine.findMany({ where: { nestId: DEFAULT_NEST, retired: true }, select: { crow: true } }),
    ]);
    const gone = new Set(retired.map((r) => r.crow));
    return [...ROSTER.filter((crow) => !gone.has(crow)), ...spun.map((s) => s.name)];
  }

  async isQuarantined(crow: string): Promise<boolean> {
    const status: QuarantineStatus = "quarantined";
    return (await this.prisma.quarantine.count({ where: { crow, status } })) > 0;
  }

  /** A roster crow or a spun crow in the registry. */
  async isFlockCrow(name: string): Promise<boolean> {
    return ROSTER.includes(name) || (await this.prisma.spunCrow.count({ where: { name } })) > 0;
  }

  /** Refuses (400) an author who may not post here, saying who may. `internal` is undefined for a client's post. */
  async check(
    nest: NestRecord,
    author: string,
    isMember: boolean,
    asking: boolean,
    internal: { response?: boolean } | undefined,
  ): Promise<void> {
    if (author === "owner" || isMember) return;
    if (asking && ASK_ROLES.includes(author)) return;
    if (internal) {
      // The server speaks for the service roles, and a crow the Sentry borrowed answers what it was
      // picked for; a stranger to the flock never posts.
      if (author === SERVER_VOICE || SERVICE_ROLE_NAMES.includes(author)) return;
      if (internal.response && (await this.isFlockCrow(author))) return;
    }
    const role = SERVICE_ROLE_NAMES.find((r) => r === author);
    if (role) {
      throw new BadInputError(
        ASK_ROLES.includes(role)
          ? `${role} is a service role, not a member of nest "${nest.id}"; it may only post ask_owner here.`
          : `${role} is a service role, not a member of nest "${nest.id}"; it speaks here only through the harness.`,
      );
    }
    throw new BadInputError(
      `${author} is not a member of nest "${nest.id}"; a non-member posts through the assistant (address Quill) or a member.`,
    );
  }
}
