// Ledger and nest rows written straight into a test server's database, for the read paths that
// page them: trust records whose counts agree with their history (as apply() keeps them), and a
// nest's messages numbered from 1. What a client then reads is the server's own answer.
import type { App } from "../../src/app.ts";
import { deciderColumns, type Actor } from "../../src/base/actor.ts";

const VERDICTS = ["approved", "rejected", "timeout", "auto"] as const;

/**
 * Adds `count` history entries to (holder, taskType), varied verdicts, and the record's counts;
 * entry i names deciders[i % deciders.length] as who decided it (none when the list is empty).
 */
export async function addTrustHistory(
  app: App,
  holder: string,
  taskType: string,
  count: number,
  seed = 1,
  deciders: Actor[] = [],
): Promise<void> {
  let approvals = 0;
  let rejections = 0;
  let autos = 0;
  const data = Array.from({ length: count }, (_, i) => {
    const verdict = VERDICTS[(i * 7 + seed) % VERDICTS.length]!;
    if (verdict === "approved") approvals++;
    else if (verdict === "auto") autos++;
    else rejections++;
    const decider = deciders.length === 0 ? null : deciders[i % deciders.length]!;
    return {
      holder,
      taskType,
      verdict,
      subject: `lst${seed}-${i + 1}`,
      from: 0,
      to: 0,
      streak: 0,
      at: new Date(Date.UTC(2026, 0, 1) + i * 1000),
      ...deciderColumns(decider),
    };
  });
  for (let i = 0; i < data.length; i += 500) await app.prisma.trustEntry.createMany({ data: data.slice(i, i + 500) });
  await app.prisma.trust.upsert({
    where: { holder_taskType: { holder, taskType } },
    create: { holder, taskType, level: 0, streak: 0, approvals, rejections, autos },
    update: { approvals: { increment: approvals }, rejections: { increment: rejections }, autos: { increment: autos } },
  });
}

/** Appends `count` plain owner says to a nest's message table after its last number. */
export async function addMessages(app: App, nestId: string, count: number): Promise<void> {
  const last =
    (await app.prisma.message.findFirst({ where: { nestId }, orderBy: { n: "desc" }, select: { n: true } }))?.n ?? 0;
  const data = Array.from({ length: count }, (_, i) => {
    const n = last + i + 1;
    return { id: `${nestId}-${n}`, nestId, n, kind: "say", author: "owner", text: `line ${n}`, taggedBy: "default" };
  });
  for (let i = 0; i < data.length; i += 500) await app.prisma.message.createMany({ data: data.slice(i, i + 500) });
}

let listCounter = 0;

/**
 * A finished list of `items` items, each with a decided triage approval, written as rows (no flock
 * run: nothing picks a finished list up). Returns its id.
 */
export async function addFinishedList(app: App, requester: string, items: number, nestId = "todo"): Promise<string> {
  const id = `lstfx${process.pid.toString(36)}${(listCounter++).toString(36).padStart(4, "0")}`;
  const now = new Date();
  await app.prisma.todoList.create({
    data: {
      id,
      requester,
      nestId,
      text: Array.from({ length: items }, (_, i) => `thing ${i + 1}`).join("\n"),
      status: "finished",
      tokenBudget: 1000,
      finishedAt: now,
      items: {
        create: Array.from({ length: items }, (_, i) => ({
          id: `${id}-${i + 1}`,
          n: i + 1,
          text: `thing ${i + 1}`,
          stage: "done",
          mode: "solo",
          taskType: "research",
        })),
      },
    },
  });
  for (let i = 1; i <= items; i++) {
    await app.prisma.approval.create({
      data: { itemId: `${id}-${i}`, target: "triage", status: "approved", deadline: now, decidedAt: now },
    });
  }
  return id;
}
