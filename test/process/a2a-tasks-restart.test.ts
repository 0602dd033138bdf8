// An A2A task outlives its server (docs/integrations.md "A2A", "Tasks are lists"): a task sent to a
// server that is then killed (kill -9) is answered by the restarted one, from its list's events:
// tasks/get and tasks/resubscribe give its status and its answers so far, a reply decides the
// approval it names, and it runs to completed. Driven by the A2A SDK's client only.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { TaskState, type Task } from "@a2a-js/sdk";
import { crash, startServerProcess, type ServerProcess } from "../helpers/process.ts";
import { a2aClient, artifactIds, sendParams, statusText, userMessage } from "../helpers/a2a-client.ts";

const dataDir = mkdtempSync(path.join(os.tmpdir(), "crows-a2a-restart-"));
const env = { CROWS_DATA_DIR: dataDir, CROWS_PORT: "0", CROWS_APPROVAL_WINDOW_MS: "600000" };
const procs: ServerProcess[] = [];

test.after(async () => {
  for (const proc of procs) await crash(proc);
  rmSync(dataDir, { recursive: true, force: true });
});

test("a task sent before kill -9: the restarted server gets it, resubscribes to it, takes its reply and finishes it", async () => {
  const first = await startServerProcess(env);
  procs.push(first);
  const before = await a2aClient(first.url);
  let task = (await before.sendMessage(sendParams(userMessage("Buy milk\nWrite a haiku about crows")))) as Task;
  // Approve until an answer is in (it waits on its output verdict then): the task has an artifact.
  for (let turn = 0; turn < 6 && task.artifacts.length === 0; turn++) {
    assert.is(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(task));
    task = (await before.sendMessage(sendParams(userMessage("approve", task.id, task.contextId)))) as Task;
  }
  assert.ok(task.artifacts.length > 0, "an answer before the crash");
  assert.is(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(task));
  const answered = artifactIds(task);
  await crash(first);

  const second = await startServerProcess(env);
  procs.push(second);
  const after = await a2aClient(second.url);
  const got = await after.getTask({ tenant: "", id: task.id, historyLength: undefined });
  assert.is(got.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, statusText(got));
  assert.match(statusText(got), /Reply "approve" or "reject"/);
  assert.is(got.contextId, task.contextId);
  assert.is(got.metadata?.list_id, task.metadata?.list_id);
  // The answers so far: those the first server sent, and any that came before it died.
  for (const id of answered) assert.ok(artifactIds(got).includes(id), `${id} is still an artifact`);

  const resubscribed: Task[] = [];
  for await (const event of after.resubscribeTask({ tenant: "", id: task.id })) {
    if (event.payload?.$case === "task") resubscribed.push(event.payload.value);
  }
  assert.is(resubscribed.length, 1);
  assert.is(resubscribed[0]!.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
  assert.equal(artifactIds(resubscribed[0]!), artifactIds(got));

  let now = got;
  for (let turn = 0; turn < 6 && now.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED; turn++) {
    now = (await after.sendMessage(sendParams(userMessage("approve", task.id, task.contextId)))) as Task;
  }
  assert.is(now.status?.state, TaskState.TASK_STATE_COMPLETED, statusText(now));
  const listId = task.metadata?.list_id as string;
  assert.equal(artifactIds(now), [`${listId}-1`, `${listId}-2`]);
  const final = await after.getTask({ tenant: "", id: task.id, historyLength: undefined });
  assert.is(final.status?.state, TaskState.TASK_STATE_COMPLETED);
  assert.match(statusText(final), /^2 of 2 items answered/);
});

test.run();
