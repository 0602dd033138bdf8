// Many finished lists written straight into the database (seconds, not minutes of flock work), for
// tests that need a lot stored: `count` lists of `items` items each, requester "stored".
import type { TestServer } from "./server.ts";

export async function storeLists(server: TestServer, count: number, items: number): Promise<string[]> {
  const prisma = server.app.prisma;
  const ids = Array.from({ length: count }, (_, i) => `stored${String(i).padStart(4, "0")}`);
  const line = (n: number) => `stored item ${n} ${"x".repeat(40)}`;
  await prisma.todoList.createMany({
    data: ids.map((id) => ({
      id,
      requester: "stored",
      text: Array.from({ length: items }, (_, n) => line(n + 1)).join("\n"),
      status: "finished",
      tokenBudget: 20_000,
      finishedAt: new Date(),
    })),
  });
  await prisma.item.createMany({
    data: ids.flatMap((listId) =>
      Array.from({ length: items }, (_, n) => ({
        id: `${listId}-${n + 1}`,
        listId,
        n: n + 1,
        text: line(n + 1),
        stage: "done",
        answer: "done",
      })),
    ),
  });
  return ids;
}
