// What a list's stream must read as after a takeover, however the old owner stalled (docs/rules.md
// "One owner's story"): read from the log itself, in seq order.
import * as assert from "uvu/assert";
import pg from "pg";

export interface LoggedEvent {
  seq: number;
  name: string;
  data: any;
}

/** Every event of `stream`, read fresh from the shared PostgreSQL log (not from any instance's memory). */
export async function replayFromLog(databaseUrl: string, stream: string): Promise<LoggedEvent[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ seq: number; name: string; payload: string }>(
      `SELECT "seq", "name", "payload" FROM "Event" WHERE "stream" = $1 ORDER BY "seq"`,
      [stream],
    );
    return rows.map((r) => ({ seq: r.seq, name: r.name, data: JSON.parse(r.payload) }));
  } finally {
    await client.end();
  }
}

/**
 * One story: each item triaged once, answered at most once, one verdict per target, every
 * crow.flying landed exactly once after it, one list.finished and nothing after it.
 */
export function assertOneStory(events: LoggedEvent[], itemCount: number): void {
  const names = events.map((e) => `${e.seq} ${e.name} ${e.data.item_id ?? ""} ${e.data.crow ?? ""}`).join("\n");
  const seqs = events.map((e) => e.seq);
  assert.equal(
    seqs,
    seqs.map((_, i) => i + 1),
    "one gapless sequence",
  );
  const finished = events.filter((e) => e.name === "list.finished");
  assert.is(finished.length, 1, `one list.finished:\n${names}`);
  assert.is(events.at(-1)!.name, "list.finished", `nothing follows list.finished:\n${names}`);

  const perItem = (name: string) => {
    const counts = new Map<string, number>();
    for (const e of events) if (e.name === name) counts.set(e.data.item_id, (counts.get(e.data.item_id) ?? 0) + 1);
    return counts;
  };
  const triaged = perItem("item.triaged");
  assert.is(triaged.size, itemCount, `every item triaged:\n${names}`);
  for (const [item, n] of triaged) assert.is(n, 1, `${item} triaged ${n} times:\n${names}`);
  for (const [item, n] of perItem("item.answered")) assert.is(n, 1, `${item} answered ${n} times:\n${names}`);
  const verdicts = new Map<string, number>();
  for (const e of events.filter((e) => e.name === "verdict")) {
    const target = `${e.data.item_id}|${e.data.target}`;
    verdicts.set(target, (verdicts.get(target) ?? 0) + 1);
  }
  for (const [target, n] of verdicts) assert.is(n, 1, `${target} has ${n} verdicts:\n${names}`);

  // Each crow.flying has exactly one crow.landed after it (paired by item and crow, first in first out).
  const open = new Map<string, number>();
  for (const e of events) {
    const key = `${e.data.item_id}|${e.data.crow}`;
    if (e.name === "crow.flying") open.set(key, (open.get(key) ?? 0) + 1);
    if (e.name === "crow.landed") {
      const flying = open.get(key) ?? 0;
      assert.ok(flying > 0, `seq ${e.seq}: a landing of ${key} with no flight in the air:\n${names}`);
      open.set(key, flying - 1);
    }
  }
  for (const [key, n] of open) assert.is(n, 0, `${key}: ${n} flights never landed:\n${names}`);
}
