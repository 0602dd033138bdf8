// A2A push notifications as webhook deliveries (docs/integrations.md "Push notifications"). A push
// config names where a task's updates go; each update is stored once (A2aPush) and queued as a
// WebhookDelivery per config of its task, in one transaction, so the webhook sender sends it as it
// sends any delivery: leased, in order per config, signed with Standard Webhooks headers, retried
// on CROWS_WEBHOOK_RETRY_SCHEDULE_MS, every attempt recorded. The config's token is the signing
// key and its credentials go out as the Authorization header: both are stored as given (they must
// be used) and never read back (docs/security.md "A2A push configs").
import { randomBytes } from "node:crypto";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { WebhookConfig } from "../base/webhook-config.ts";
import { BadInputError } from "../base/errors.ts";
import { checkTarget } from "./targets.ts";

/** The delivery type of a push: its body is stored, not built from a log event. */
export const A2A_PUSH_TYPE = "a2a.push";
/** The stream a task's pushes are ordered in (one delivery at a time per config and stream). */
export const pushStreamOf = (taskId: string): string => `a2a:${taskId}`;
/** The webhook-id of one push to one config: stable across retries. */
export const pushDeliveryIdOf = (pushId: number, configRowId: string): string => `push_${pushId}_${configRowId}`;

const MAX_CONFIGS_PER_TASK = 10;
const MAX_TOKEN = 512;
const MAX_CREDENTIALS = 4096;
const MAX_CONFIG_ID = 200;
/** An HTTP auth scheme is a token68-ish word (RFC 9110 11.1): no space, no separator. */
const SCHEME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;

/** A push config as a caller sets it (the protocol's TaskPushNotificationConfig, its parts we keep). */
export interface PushConfigInput {
  taskId: string;
  id: string;
  url: string;
  token: string;
  authentication?: { scheme: string; credentials: string } | undefined;
}

/** A push config as every answer shows it: never the token, never the credentials. */
export interface PushConfigView {
  taskId: string;
  id: string;
  url: string;
  /** The auth scheme the pushes carry ("" for none); the credentials are not shown. */
  authScheme: string;
}

export class A2aPushes {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly config: WebhookConfig,
    /** Called once a push is queued: the sender looks for due deliveries. */
    private readonly queued: () => void,
    /** Called once a config is added or removed: the sender reads its targets afresh. */
    private readonly changed: () => void,
  ) {}

  /**
   * Stores a config (a new id when it has none; the same id again replaces it). A 400 names what is
   * wrong, never repeating the token or the credentials.
   */
  async save(input: PushConfigInput): Promise<PushConfigView> {
    const url = checkTarget(input.url, this.config.allowPrivate);
    if (typeof input.token !== "string" || input.token.length < 16 || input.token.length > MAX_TOKEN)
      throw new BadInputError(
        `"token" must be 16 to ${MAX_TOKEN} characters: it is the key each push is signed with (Standard Webhooks).`,
      );
    const scheme = input.authentication?.scheme ?? "";
    const credentials = input.authentication?.credentials ?? "";
    if (scheme !== "" && !SCHEME.test(scheme))
      throw new BadInputError('"authentication.scheme" must be an HTTP auth scheme such as Bearer or Basic.');
    if (credentials.length > MAX_CREDENTIALS || /[\r\n\u0000]/.test(credentials))
      throw new BadInputError(
        `"authentication.credentials" must be one line of at most ${MAX_CREDENTIALS} characters.`,
      );
    if (scheme === "" && credentials !== "")
      throw new BadInputError('"authentication.credentials" needs its "authentication.scheme".');
    const configId = input.id || `push-${randomBytes(6).toString("hex")}`;
    if (configId.length > MAX_CONFIG_ID) throw new BadInputError(`"id" must be at most ${MAX_CONFIG_ID} characters.`);
    const data = { url: url.href, token: input.token, authScheme: scheme, authCredentials: credentials };
    const where = { taskId_configId: { taskId: input.taskId, configId } };
    const existing = await this.prisma.a2aPushConfig.findUnique({ where });
    if (existing) await this.prisma.a2aPushConfig.update({ where, data });
    else {
      if ((await this.prisma.a2aPushConfig.count({ where: { taskId: input.taskId } })) >= MAX_CONFIGS_PER_TASK)
        throw new BadInputError(`At most ${MAX_CONFIGS_PER_TASK} push configs a task; delete one first.`);
      await this.prisma.a2aPushConfig.create({
        data: { id: `pc_${randomBytes(9).toString("base64url")}`, taskId: input.taskId, configId, ...data },
      });
    }
    this.changed();
    return { taskId: input.taskId, id: configId, url: url.href, authScheme: scheme };
  }

  async list(taskId: string): Promise<PushConfigView[]> {
    const rows = await this.prisma.a2aPushConfig.findMany({ where: { taskId }, orderBy: { createdAt: "asc" } });
    return rows.map((r) => ({ taskId: r.taskId, id: r.configId, url: r.url, authScheme: r.authScheme }));
  }

  /** Removes one config (or every config of the task) and the pushes still waiting for it. */
  async remove(taskId: string, configId?: string): Promise<void> {
    const rows = await this.prisma.a2aPushConfig.findMany({
      where: configId === undefined ? { taskId } : { taskId, configId },
      select: { id: true },
    });
    if (rows.length === 0) return;
    const ids = rows.map((r) => r.id);
    await this.prisma.$transaction([
      this.prisma.webhookDelivery.deleteMany({ where: { endpointId: { in: ids }, state: "pending" } }),
      this.prisma.a2aPushConfig.deleteMany({ where: { id: { in: ids } } }),
    ]);
    this.changed();
  }

  /**
   * Queues updates of a task (in the order given) for each of its configs, in one transaction;
   * nothing when it has none. Calls for one task must come in order (the caller chains them): the
   * push's id orders its deliveries. The configs are read once per call, after every update in it
   * was handed over, so a config set before an update was handed over gets it.
   */
  async push(taskId: string, bodies: string[]): Promise<number> {
    const configs = await this.prisma.a2aPushConfig.findMany({ where: { taskId }, select: { id: true } });
    if (configs.length === 0 || bodies.length === 0) return 0;
    const now = new Date();
    await this.prisma.$transaction(async (tx) => {
      for (const body of bodies) {
        const push = await tx.a2aPush.create({ data: { taskId, body, createdAt: now } });
        await tx.webhookDelivery.createMany({
          data: configs.map((c) => ({
            id: pushDeliveryIdOf(push.id, c.id),
            endpointId: c.id,
            eventId: push.id,
            stream: pushStreamOf(taskId),
            type: A2A_PUSH_TYPE,
            nextAttemptAt: now,
            createdAt: now,
          })),
        });
      }
    });
    this.queued();
    return configs.length;
  }
}
