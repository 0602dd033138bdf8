// Standing permissions (docs/tools.md): the owner's "always, for this crow and this task type"
// for one tool on one server. Granted in the transaction of the approval that says so (its
// tool.decided, with its actor, is the grant's record); revoked with a `tool.permission_revoked`
// event and its actor on the tool-permissions stream, so the audit trail has both. Revoked rows stay.
import { randomBytes } from "node:crypto";
import type { PrismaClient, ToolCall, ToolPermission } from "../generated/prisma/client.ts";
import type { EventLog, Tx } from "../log/event-log.ts";
import { NotFoundError } from "../base/errors.ts";
import { actorOfColumns, deciderColumns, type Actor } from "../base/actor.ts";

/** Where standing permissions' revocations are logged (audited, like every actor's write). */
export const TOOL_PERMISSIONS_STREAM = "tool-permissions";

export class ToolPermissions {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly log: EventLog,
    private readonly now: () => number = Date.now,
  ) {}

  /** A standing permission covering this crow, task type and tool, if one stands. */
  permissionFor(crow: string, taskType: string, serverId: string, tool: string): Promise<ToolPermission | null> {
    return this.prisma.toolPermission.findFirst({ where: { crow, taskType, serverId, tool, revokedAt: null } });
  }

  /** Standing permissions, newest first; revoked ones too when asked (the audit). */
  list(includeRevoked = false): Promise<ToolPermission[]> {
    return this.prisma.toolPermission.findMany({
      where: includeRevoked ? {} : { revokedAt: null },
      orderBy: { grantedAt: "desc" },
    });
  }

  /** Revokes a standing permission (an event on the tool-permissions stream, with its actor). */
  async revoke(permissionId: string, actor: Actor): Promise<void> {
    const at = new Date(this.now());
    let revoked = false;
    await this.log.appendWith(TOOL_PERMISSIONS_STREAM, async (tx) => {
      const row = await tx.toolPermission.findUnique({ where: { id: permissionId } });
      if (!row || row.revokedAt !== null) return [];
      await tx.toolPermission.update({
        where: { id: permissionId },
        data: { revokedAt: at, revokedBy: JSON.stringify(actor) },
      });
      revoked = true;
      const payload = {
        permission_id: row.id,
        crow: row.crow,
        task_type: row.taskType,
        server_id: row.serverId,
        tool: row.tool,
        ts: at.toISOString(),
        actor,
      };
      return [{ name: "tool.permission_revoked", payload }];
    });
    if (!revoked) throw new NotFoundError(`No standing permission ${permissionId}.`);
  }
}

/** Grants the standing permission an "always" approval of `call` asks for, in that approval's transaction. */
export async function grantIn(
  tx: Tx,
  call: Pick<ToolCall, "id" | "crow" | "taskType" | "serverId" | "tool">,
  actor: Actor,
  at: Date,
): Promise<void> {
  const columns = deciderColumns(actor);
  await tx.toolPermission.create({
    data: {
      id: `perm${randomBytes(5).toString("hex")}`,
      crow: call.crow,
      taskType: call.taskType,
      serverId: call.serverId,
      tool: call.tool,
      grantedAt: at,
      callId: call.id,
      grantedBy: columns.decidedBy,
      grantedByTokenId: columns.decidedByTokenId,
      grantedByTokenName: columns.decidedByTokenName,
      grantedByWebhookId: columns.decidedByWebhookId,
    },
  });
}

/** Who granted a permission: the actor of the calls it allows. */
export function grantorOf(permission: ToolPermission): Actor | null {
  return actorOfColumns({
    decidedBy: permission.grantedBy,
    decidedByTokenId: permission.grantedByTokenId,
    decidedByTokenName: permission.grantedByTokenName,
    decidedByWebhookId: permission.grantedByWebhookId,
  });
}
