// The A2A agent's push notifications (docs/integrations.md "Push notifications"): the SDK's push
// config store and push sender, both over the webhook outbox (src/webhooks/a2a-push.ts). The store
// keeps a config's token and credentials and never gives them back; the sender queues each update
// the SDK hands it as a delivery, which the webhook sender signs, sends and retries.
import type { StreamResponse, TaskPushNotificationConfig } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import {
  V1PushNotificationSerializer,
  type PushNotificationSender,
  type PushNotificationStore,
} from "@a2a-js/sdk/server";
import { BadInputError } from "../../base/errors.ts";
import { describeError } from "../../base/describe-error.ts";
import type { A2aPushes, PushConfigView } from "../../webhooks/a2a-push.ts";

/** A stored config as the protocol shows it: the token and the credentials left empty. */
export function shownConfig(view: PushConfigView): TaskPushNotificationConfig {
  return {
    tenant: "",
    id: view.id,
    taskId: view.taskId,
    url: view.url,
    token: "",
    authentication: view.authScheme ? { scheme: view.authScheme, credentials: "" } : undefined,
  };
}

export class CrowsPushStore implements PushNotificationStore {
  constructor(private readonly pushes: A2aPushes) {}

  async save(taskId: string, _context: unknown, config: TaskPushNotificationConfig): Promise<void> {
    try {
      const saved = await this.pushes.save({
        taskId,
        id: config.id,
        url: config.url,
        token: config.token,
        authentication: config.authentication,
      });
      config.id = saved.id; // the protocol's rule: a new config's id is assigned in place
    } catch (error) {
      if (error instanceof BadInputError) throw new RequestMalformedError(error.message);
      throw error;
    }
  }

  async load(taskId: string): Promise<TaskPushNotificationConfig[]> {
    return (await this.pushes.list(taskId)).map(shownConfig);
  }

  async delete(taskId: string, _context: unknown, configId?: string): Promise<void> {
    await this.pushes.remove(taskId, configId);
  }
}

const taskIdOf = (response: StreamResponse): string => {
  const payload = response.payload;
  if (!payload) return "";
  return payload.$case === "task" ? payload.value.id : payload.value.taskId;
};

/**
 * Queues each update as the SDK hands it over; one task's in the order they came. The updates
 * handed over while the task's previous batch was being queued go together (one read of the task's
 * configs and one transaction for them all, not one each: a task's stream hands over hundreds).
 */
export class CrowsPushSender implements PushNotificationSender {
  private readonly serializer = new V1PushNotificationSerializer();
  /** Each task's last batch: the next waits for it, so the pushes' ids keep the updates' order. */
  private readonly tails = new Map<string, Promise<void>>();
  /** Each task's batch still taking updates (it has not started). */
  private readonly gathering = new Map<string, { bodies: string[]; queued: Promise<void> }>();

  constructor(
    private readonly pushes: A2aPushes,
    private readonly logLine: (line: string) => void,
  ) {}

  send(response: StreamResponse): Promise<void> {
    const taskId = taskIdOf(response);
    if (!taskId) return Promise.resolve(); // a message outside any task: no config can name it
    const { body } = this.serializer.serialize(response);
    const open = this.gathering.get(taskId);
    if (open) {
      open.bodies.push(body);
      return open.queued;
    }
    const bodies = [body];
    const queued = (this.tails.get(taskId) ?? Promise.resolve())
      .then(() => {
        // From here this batch takes no more: the next update starts the next batch, behind it.
        if (this.gathering.get(taskId)?.bodies === bodies) this.gathering.delete(taskId);
        return this.pushes.push(taskId, bodies);
      })
      .then(
        () => undefined,
        (error: unknown) => this.logLine(`a2a: a push of task ${taskId} could not be queued: ${describeError(error)}`),
      );
    this.gathering.set(taskId, { bodies, queued });
    this.tails.set(taskId, queued);
    void queued.then(() => {
      if (this.tails.get(taskId) === queued) this.tails.delete(taskId);
    });
    return queued;
  }
}
