// The aged database of bench/aged-ledger.ts: rows shaped like the flock's own (lists, items,
// approvals, trust records and history, one long nest conversation, every list's and nest's
// events), written by direct SQL inserts into a migrated SQLite file, not by running the flock.
import Database from "better-sqlite3";
import { TASK_TYPES } from "../src/base/roster.ts";

export const ITEMS_PER_LIST = 20; // ~97,000 items at the size
const HOLDERS = ["flock", "Sentry", "Hugin", "Munin", "Pepper", "Inky", "Sable", "Rook", "Quill", "Ash"];

export interface Sizes {
  events: number;
  lists: number;
  messages: number;
  trustEntries: number;
}

/**
 * The database scaled to `events`; never below what makes every bounded answer full (each
 * record 20+ entries, 50+ messages, 20+ lists), so the fresh database answers the same shapes as
 * the aged one and only the age differs.
 */
export function sizesFor(events: number): Sizes {
  const scale = events / 830_000;
  const lists = Math.max(25, Math.round(4_800 * scale));
  return {
    events: Math.max(events, lists * 40 + 60),
    lists,
    messages: Math.max(60, Math.round(24_000 * scale)),
    trustEntries: Math.max(HOLDERS.length * TASK_TYPES.length * 25, Math.round(193_000 * scale)),
  };
}

/** Writes the rows into a migrated database file, in one transaction per table. */
export function age(
  file: string,
  { events: EVENTS, lists: LISTS, messages: NEST_MESSAGES, trustEntries: TRUST_ENTRIES }: Sizes,
): { listIds: string[]; events: number } {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const started = Date.UTC(2026, 0, 1);
  const at = (ms: number) => new Date(ms).toISOString().replace("Z", "+00:00");
  const listIds: string[] = [];
  let events = 0;
  const insertEvent = db.prepare(
    `INSERT INTO "Event" ("stream", "seq", "name", "payload", "ts") VALUES (?, ?, ?, ?, ?)`,
  );
  const insertList = db.prepare(
    `INSERT INTO "TodoList" ("id", "requester", "nestId", "text", "status", "tokenBudget", "tokensUsed", "createdAt", "finishedAt") VALUES (?, ?, 'todo', ?, 'finished', 20000, ?, ?, ?)`,
  );
  const insertItem = db.prepare(
    `INSERT INTO "Item" ("id", "listId", "n", "text", "stage", "mode", "taskType", "subtasks", "reason", "answer", "crows", "updatedAt") VALUES (?, ?, ?, ?, 'done', ?, ?, '[]', ?, ?, ?, ?)`,
  );
  const insertApproval = db.prepare(
    `INSERT INTO "Approval" ("itemId", "target", "status", "deadline", "createdAt", "decidedAt") VALUES (?, ?, ?, ?, ?, ?)`,
  );
  // Events per list so the whole log reaches EVENTS with the nest's messages.
  const perList = Math.max(4, Math.floor((EVENTS - NEST_MESSAGES) / LISTS));
  db.transaction(() => {
    for (let l = 0; l < LISTS; l++) {
      const id = `lstaged${l.toString(16).padStart(6, "0")}`;
      listIds.push(id);
      const t0 = started + l * 60_000;
      const requester = `requester-${l % 40}`;
      insertList.run(
        id,
        requester,
        Array.from({ length: ITEMS_PER_LIST }, (_, i) => `task ${i + 1} of list ${l}`).join("\n"),
        1200 + (l % 700),
        at(t0),
        at(t0 + 50_000),
      );
      for (let n = 1; n <= ITEMS_PER_LIST; n++) {
        const itemId = `${id}-${n}`;
        const taskType = TASK_TYPES[(l + n) % TASK_TYPES.length]!;
        insertItem.run(
          itemId,
          id,
          n,
          `task ${n} of list ${l}`,
          n % 7 === 0 ? "split" : "solo",
          taskType,
          "[offline] One action, one crow.",
          `An answer to task ${n}, a sentence or two long, as the offline voice writes them.`,
          JSON.stringify([HOLDERS[2 + (n % 8)]]),
          at(t0 + n * 1000),
        );
        insertApproval.run(
          itemId,
          "triage",
          n % 5 === 0 ? "auto" : "approved",
          at(t0 + 600_000),
          at(t0 + n * 900),
          at(t0 + n * 950),
        );
        insertApproval.run(
          itemId,
          "output",
          n % 9 === 0 ? "rejected" : "approved",
          at(t0 + 600_000),
          at(t0 + n * 1000),
          at(t0 + n * 1010),
        );
      }
      const stream = `list:${id}`;
      for (let seq = 1; seq <= perList; seq++) {
        const n = ((seq - 1) % ITEMS_PER_LIST) + 1;
        const name =
          seq === 1
            ? "list.started"
            : seq === perList
              ? "list.finished"
              : ["item.triaged", "crow.flying", "item.answered", "verdict"][seq % 4]!;
        const payload =
          name === "verdict"
            ? {
                list_id: id,
                item_id: `${id}-${n}`,
                target: seq % 8 < 4 ? "triage" : "output",
                verdict: "approved",
                ts: at(t0 + seq * 100),
              }
            : {
                list_id: id,
                item_id: `${id}-${n}`,
                crow: HOLDERS[2 + (seq % 8)],
                note: `event ${seq} of list ${l}, with the kind of text the flock's payloads carry`,
                ts: at(t0 + seq * 100),
              };
        insertEvent.run(stream, seq, name, JSON.stringify(payload), at(t0 + seq * 100));
        events++;
      }
    }
  })();
  const insertMessage = db.prepare(
    `INSERT INTO "Message" ("id", "nestId", "n", "kind", "author", "text", "to", "refersTo", "taggedBy", "createdAt") VALUES (?, 'todo', ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (let n = 1; n <= NEST_MESSAGES; n++) {
      const kind = ["say", "request", "claim", "deliver", "say"][n % 5]!;
      const author = n % 5 === 1 ? "owner" : HOLDERS[2 + (n % 8)]!;
      const text = `message ${n}: a line of nest talk, about as long as the crows' usually are`;
      const to = kind === "deliver" ? "owner" : "";
      const refersTo = kind === "claim" || kind === "deliver" ? `todo-${n - 1}` : "";
      insertMessage.run(`todo-${n}`, n, kind, author, text, to, refersTo, "jev", at(started + n * 5000));
      const payload = {
        nest_id: "todo",
        ts: at(started + n * 5000),
        msg_id: `todo-${n}`,
        kind,
        author,
        text,
        to,
        refers_to: refersTo,
        tagged_by: "jev",
        mode: "",
        mode_tagged_by: "",
        invited: 0,
        approval_phrase: "",
        resolved: "",
      };
      insertEvent.run("nest:todo", n, "nest.message", JSON.stringify(payload), at(started + n * 5000));
      events++;
    }
  })();
  const insertEntry = db.prepare(
    `INSERT INTO "TrustEntry" ("holder", "taskType", "verdict", "subject", "from", "to", "streak", "at") VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const insertTrust = db.prepare(
    `INSERT INTO "Trust" ("holder", "taskType", "level", "streak", "approvals", "rejections", "autos", "updatedAt") VALUES (?, ?, ?, 0, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    const counts = new Map<string, [number, number, number]>();
    for (let i = 0; i < TRUST_ENTRIES; i++) {
      const holder = HOLDERS[i % HOLDERS.length]!;
      const taskType = TASK_TYPES[Math.floor(i / HOLDERS.length) % TASK_TYPES.length]!;
      const verdict = ["approved", "approved", "approved", "rejected", "auto", "timeout"][i % 6]!;
      const key = `${holder}\u0000${taskType}`;
      const c = counts.get(key) ?? [0, 0, 0];
      if (verdict === "approved") c[0]++;
      else if (verdict === "auto") c[2]++;
      else c[1]++;
      counts.set(key, c);
      insertEntry.run(
        holder,
        taskType,
        verdict,
        `lstaged${(i % LISTS).toString(16).padStart(6, "0")}-${(i % ITEMS_PER_LIST) + 1}`,
        1,
        1,
        0,
        at(started + i * 200),
      );
    }
    for (const [key, [approvals, rejections, autos]] of counts) {
      const [holder, taskType] = key.split("\u0000");
      insertTrust.run(holder, taskType, 1, approvals, rejections, autos, at(Date.now()));
    }
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.exec("ANALYZE");
  db.close();
  return { listIds, events };
}
