// The tool servers an owner connected (docs/tools.md "Connecting servers"), in the ToolServer
// table. Every change is an event on the "tool-servers" stream carrying its actor, so the audit
// trail reads it from the durable log (tool_server.added, .removed, .policies_set, .nests_set).
// Secrets (env and header values) are written here and read back only by the manager that sends
// them: no view, event or message carries one, only their names.
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import { BadInputError, ConflictError, NotFoundError } from "../base/errors.ts";
import { actorWire, type Actor } from "../base/actor.ts";
import { stringArray } from "../base/util/json-column.ts";
import type { ToolPolicy } from "./types.ts";
import { isToolPolicy } from "./policy.ts";
import { MAX_SERVERS } from "./limits.ts";
import {
  checkNests,
  checkPolicyChanges,
  checkServerInput,
  type ServerInput,
  type ToolServerSpec,
  type Transport,
} from "./input.ts";

export const TOOL_SERVERS_STREAM = "tool-servers";
export const TOOL_SERVER_ADDED = "tool_server.added";
export const TOOL_SERVER_REMOVED = "tool_server.removed";
export const TOOL_POLICIES_SET = "tool_server.policies_set";
export const TOOL_NESTS_SET = "tool_server.nests_set";

/** A server as every surface shows it: names of its secrets, never their values. */
export interface ToolServerView {
  id: string;
  name: string;
  transport: Transport;
  command: string;
  args: string[];
  /** "" : its own folder under the data folder. */
  cwd: string;
  url: string;
  env_names: string[];
  header_names: string[];
  /** null: every nest may use it. */
  nests: string[] | null;
  /** The owner's choices; a tool not named here has its default. */
  policies: Record<string, ToolPolicy>;
  created_at: string;
}

type Row = Awaited<ReturnType<PrismaClient["toolServer"]["findUniqueOrThrow"]>>;

function objectColumn(text: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) return {};
    return Object.fromEntries(Object.entries(value).filter((e): e is [string, string] => typeof e[1] === "string"));
  } catch {
    return {};
  }
}

const nestsColumn = (nests: string[] | null) => (nests === null ? "" : `,${nests.join(",")},`);
const nestsOf = (column: string): string[] | null => (column === "" ? null : column.split(",").filter((n) => n !== ""));
const policiesOf = (column: string): Record<string, ToolPolicy> =>
  Object.fromEntries(Object.entries(objectColumn(column)).filter((e): e is [string, ToolPolicy] => isToolPolicy(e[1])));

export function specOf(row: Row): ToolServerSpec {
  return {
    id: row.id,
    name: row.name,
    transport: row.transport === "http" ? "http" : "stdio",
    command: row.command,
    args: stringArray(row.args),
    env: objectColumn(row.env),
    cwd: row.cwd,
    url: row.url,
    headers: objectColumn(row.headers),
    nests: nestsOf(row.nests),
    policies: policiesOf(row.policies),
    createdAt: row.createdAt,
  };
}

export function viewOfSpec(spec: ToolServerSpec): ToolServerView {
  return {
    id: spec.id,
    name: spec.name,
    transport: spec.transport,
    command: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    url: spec.url,
    env_names: Object.keys(spec.env),
    header_names: Object.keys(spec.headers),
    nests: spec.nests,
    policies: spec.policies,
    created_at: spec.createdAt.toISOString(),
  };
}

export class ToolServerRegistry {
  /** Called after any change: the manager drops what it cached (and stops a removed server). */
  changed: (serverId: string) => void = () => {};
  /** The rows as last read, with the "tool-servers" stream's head seq read just before them. */
  private cached: { version: number; specs: Promise<ToolServerSpec[]> } | undefined;

  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: EventLog,
  ) {}

  async specs(): Promise<ToolServerSpec[]> {
    const rows = await this.prisma.toolServer.findMany({ orderBy: [{ createdAt: "asc" }, { id: "asc" }] });
    return rows.map(specOf);
  }

  /**
   * The rows as committed now, for every flight (docs/tools.md "Several instances"). Every change
   * to the table commits in one transaction with its event on the "tool-servers" stream, on
   * whichever instance made it, so that stream's head seq is the table's version: one indexed read
   * of the log (around Prisma) tells whether the rows read last are still the rows; they are read
   * again only when it moved. The head is read before the rows, so rows newer than their version
   * are read once more at worst, never kept past a change.
   */
  async currentSpecs(): Promise<ToolServerSpec[]> {
    const version = await this.log.lastSeq(TOOL_SERVERS_STREAM);
    const cached = this.cached;
    if (cached?.version === version) return cached.specs;
    const specs = this.specs();
    this.cached = { version, specs };
    specs.catch(() => {
      if (this.cached?.specs === specs) this.cached = undefined;
    });
    return specs;
  }

  async list(): Promise<ToolServerView[]> {
    return (await this.specs()).map(viewOfSpec);
  }

  async spec(id: string): Promise<ToolServerSpec> {
    const row = typeof id === "string" ? await this.prisma.toolServer.findUnique({ where: { id } }) : null;
    if (!row) throw new NotFoundError(`No tool server ${String(id).slice(0, 80)}.`);
    return specOf(row);
  }

  async get(id: string): Promise<ToolServerView> {
    return viewOfSpec(await this.spec(id));
  }

  private async checkNestsExist(nests: string[] | null): Promise<void> {
    if (nests === null || nests.length === 0) return;
    const found = await this.prisma.nest.findMany({ where: { id: { in: nests } }, select: { id: true } });
    const missing = nests.filter((n) => !found.some((f) => f.id === n));
    if (missing.length > 0) throw new BadInputError(`"nests": no nest ${missing.join(", ")}.`);
  }

  async add(input: ServerInput, actor: Actor): Promise<ToolServerView> {
    const checked = checkServerInput(input);
    await this.checkNestsExist(checked.nests);
    if ((await this.prisma.toolServer.count()) >= MAX_SERVERS)
      throw new BadInputError(`At most ${MAX_SERVERS} tool servers; remove one first.`);
    if (await this.prisma.toolServer.findUnique({ where: { name: checked.name } }))
      throw new ConflictError(`A tool server is already named ${checked.name}.`);
    const id = `ts_${randomBytes(8).toString("hex")}`;
    let row: Row | undefined;
    await this.log.appendWith(TOOL_SERVERS_STREAM, async (tx) => {
      row = await tx.toolServer.create({
        data: {
          id,
          name: checked.name,
          transport: checked.transport,
          command: checked.command,
          args: JSON.stringify(checked.args),
          env: JSON.stringify(checked.env),
          cwd: checked.cwd,
          url: checked.url,
          headers: JSON.stringify(checked.headers),
          nests: nestsColumn(checked.nests),
          policies: JSON.stringify(checked.policies),
        },
      });
      const view = viewOfSpec(specOf(row));
      return [
        {
          name: TOOL_SERVER_ADDED,
          payload: {
            server_id: id,
            name: view.name,
            transport: view.transport,
            env_names: view.env_names,
            header_names: view.header_names,
            nests: view.nests,
            policies: view.policies,
            actor: actorWire(actor),
          },
        },
      ];
    });
    this.changed(id);
    return viewOfSpec(specOf(row!));
  }

  async remove(id: string, actor: Actor): Promise<void> {
    const spec = await this.spec(id);
    await this.log.appendWith(TOOL_SERVERS_STREAM, async (tx) => {
      const gone = await tx.toolServer.deleteMany({ where: { id } });
      if (gone.count === 0) return [];
      return [{ name: TOOL_SERVER_REMOVED, payload: { server_id: id, name: spec.name, actor: actorWire(actor) } }];
    });
    this.changed(id);
  }

  /** Merges {tool: policy | null} into the owner's choices (null: back to the default). */
  async setPolicies(id: string, raw: unknown, actor: Actor): Promise<ToolServerView> {
    const changes = checkPolicyChanges(raw);
    if (Object.keys(changes).length === 0) throw new BadInputError('"policies" must name at least one tool.');
    await this.spec(id);
    await this.log.appendWith(TOOL_SERVERS_STREAM, async (tx) => {
      const row = await tx.toolServer.findUnique({ where: { id } });
      if (!row) throw new NotFoundError(`No tool server ${id}.`);
      const before = policiesOf(row.policies);
      const after = { ...before };
      const changed: Array<{ tool: string; from: ToolPolicy | null; to: ToolPolicy | null }> = [];
      for (const [tool, policy] of Object.entries(changes)) {
        if ((before[tool] ?? null) === policy) continue;
        if (policy === null) delete after[tool];
        else after[tool] = policy;
        changed.push({ tool, from: before[tool] ?? null, to: policy });
      }
      if (changed.length === 0) return [];
      await tx.toolServer.update({ where: { id }, data: { policies: JSON.stringify(after) } });
      return [
        {
          name: TOOL_POLICIES_SET,
          payload: { server_id: id, name: row.name, changes: changed, actor: actorWire(actor) },
        },
      ];
    });
    this.changed(id);
    return this.get(id);
  }

  /** Which nests may use the server: "all" (or null) or a list of nest ids. */
  async setNests(id: string, raw: unknown, actor: Actor): Promise<ToolServerView> {
    const nests = checkNests(raw);
    await this.checkNestsExist(nests);
    await this.spec(id);
    await this.log.appendWith(TOOL_SERVERS_STREAM, async (tx) => {
      const row = await tx.toolServer.findUnique({ where: { id } });
      if (!row) throw new NotFoundError(`No tool server ${id}.`);
      if (row.nests === nestsColumn(nests)) return [];
      await tx.toolServer.update({ where: { id }, data: { nests: nestsColumn(nests) } });
      return [
        {
          name: TOOL_NESTS_SET,
          payload: { server_id: id, name: row.name, from: nestsOf(row.nests), to: nests, actor: actorWire(actor) },
        },
      ];
    });
    this.changed(id);
    return this.get(id);
  }
}
