// The bulk export: GET /api/export/events as NDJSON and verdicts / trust history as CSV, each
// complete and in id order, resumable after an interrupted transfer with nothing missing and
// nothing twice (also while new rows arrive), one stream alone, a read-only token allowed, and bad
// parameters a 400.
import { test } from "uvu";
import * as assert from "uvu/assert";
import http from "node:http";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { addTrustHistory } from "../helpers/aged-rows.ts";
import { EXPORT_PAGE } from "../../src/log/export-pages.ts";

const OWNER = "owner-token-for-the-export-test-0001";
const READER = "reader-token-for-the-export-test-001";

/** Reads an export until `stopAfter` complete lines arrived, then drops the connection; returns them. */
function readLines(
  server: TestServer,
  path: string,
  stopAfter = Infinity,
  token = OWNER,
): Promise<{ lines: string[]; complete: boolean; status: number; type: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(server.url + path, { headers: { authorization: `Bearer ${token}` } }, (res) => {
      let buffer = "";
      const lines: string[] = [];
      let done = false;
      const finish = (complete: boolean) => {
        if (done) return;
        done = true;
        resolve({ lines, complete, status: res.statusCode ?? 0, type: String(res.headers["content-type"]) });
      };
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0 && lines.length < stopAfter) {
          lines.push(buffer.slice(0, nl).replace(/\r$/, ""));
          buffer = buffer.slice(nl + 1);
        }
        if (lines.length >= stopAfter) {
          req.destroy(); // the client goes away mid-transfer
          finish(false);
        }
      });
      res.on("end", () => finish(buffer === ""));
      res.on("error", () => finish(false));
    });
    // Our own destroy() after the lines we wanted is not a failure.
    req.on("error", (error) => {
      if (!/aborted|socket hang up|ECONNRESET/.test(error.message)) reject(error);
    });
  });
}

async function fill(server: TestServer, count: number, tag: string): Promise<void> {
  for (let i = 0; i < count; i++) {
    const list = `lst${tag}${i % 4}`;
    if (i % 9 === 0)
      await server.app.log.append(`list:${list}`, "verdict", {
        list_id: list,
        item_id: `${list}-${i}`,
        target: i % 2 ? "output" : "triage",
        verdict: ["approved", "rejected", "auto", "timeout"][i % 4],
        ts: new Date().toISOString(),
      });
    else
      await server.app.log.append(i % 5 === 0 ? `nest:${tag}` : `list:${list}`, "crow.flying", {
        list_id: list,
        item_id: `${list}-${i}`,
        crow: "Hugin",
        note: `a "quoted", comma\nline ${i}`,
      });
  }
}

async function storedIds(server: TestServer, where: Record<string, unknown> = {}): Promise<number[]> {
  return (await server.app.prisma.event.findMany({ where, orderBy: { id: "asc" }, select: { id: true } })).map(
    (e) => e.id,
  );
}

async function withServer(fn: (server: TestServer) => Promise<void>): Promise<void> {
  const server = await startTestServer({ env: { CROWS_TOKEN: OWNER, CROWS_READ_TOKENS: READER } });
  try {
    await fn(server);
  } finally {
    await server.close();
  }
}

test("events export: every event once, in id order, as NDJSON with the stored payload", () =>
  withServer(async (server) => {
    await fill(server, Math.round(EXPORT_PAGE * 2.4), "a");
    const res = await readLines(server, "/api/export/events");
    assert.is(res.status, 200);
    assert.is(res.type, "application/x-ndjson");
    assert.ok(res.complete);
    const events = res.lines.map((l) => JSON.parse(l));
    assert.equal(
      events.map((e) => e.id),
      await storedIds(server),
    );
    const stored = await server.app.prisma.event.findMany({ orderBy: { id: "asc" } });
    stored.forEach((row, i) => {
      assert.equal(events[i], {
        id: row.id,
        stream: row.stream,
        seq: row.seq,
        name: row.name,
        ts: row.ts.toISOString(),
        payload: JSON.parse(row.payload),
      });
    });
  }));

test("an interrupted export resumed from its last id: nothing missing, nothing twice, new events included", () =>
  withServer(async (server) => {
    await fill(server, Math.round(EXPORT_PAGE * 2.2), "b");
    for (const [stopAfter, stream] of [
      [1, ""],
      [EXPORT_PAGE - 1, ""],
      [EXPORT_PAGE, ""],
      [EXPORT_PAGE + 333, ""],
      [7, "nest:b"],
      [250, "list:lstb1"],
    ] as const) {
      const filter = stream ? `&stream=${encodeURIComponent(stream)}` : "";
      const first = await readLines(server, `/api/export/events?after=0${filter}`, stopAfter);
      assert.not.ok(first.complete, "the first transfer was cut off");
      const seen = first.lines.map((l) => JSON.parse(l).id as number);
      // Rows arrive between the two transfers; the resumed export includes them.
      await fill(server, 40, "b");
      const rest = await readLines(server, `/api/export/events?after=${seen.at(-1)}${filter}`);
      assert.ok(rest.complete);
      const all = [...seen, ...rest.lines.map((l) => JSON.parse(l).id as number)];
      assert.equal(
        all,
        await storedIds(server, stream ? { stream } : {}),
        `cut after ${stopAfter}${filter}: the two transfers make the whole log`,
      );
    }
  }));

test("verdicts and trust history as CSV: fixed columns, quoted fields, resumable by the first column", () =>
  withServer(async (server) => {
    await fill(server, 700, "c");
    await addTrustHistory(server.app, "Hugin", "research", 1500, 3);
    await addTrustHistory(server.app, 'Odd "holder", with comma', "code", 40, 4);
    // Past a page boundary, entries that name who decided them.
    const deciders = [
      { kind: "owner" },
      { kind: "token", token_id: "tok_1", token_name: 'night, "B"' },
      { kind: "system" },
      { kind: "link", webhook_id: "ep_1" },
    ] as const;
    await addTrustHistory(server.app, "Munin", "writing", 1100, 5, [...deciders]);
    const actor = { kind: "token", token_id: "tok_abc", token_name: 'ci, "bot"' };
    const decided = await server.app.log.append("list:lstc9", "verdict", {
      list_id: "lstc9",
      item_id: "lstc9-1",
      target: "output",
      verdict: "approved",
      ts: new Date().toISOString(),
      actor,
    });
    const verdicts = await readLines(server, "/api/export/verdicts");
    assert.match(verdicts.type, /^text\/csv/);
    assert.is(verdicts.lines[0], "event_id,ts,list_id,item_id,target,verdict,actor,actor_token_id,actor_token_name");
    const rows = verdicts.lines.slice(1, -1).map((l) => l.split(","));
    assert.equal([...rows.map((r) => Number(r[0])), decided.id], await storedIds(server, { name: "verdict" }));
    for (const r of rows) {
      assert.is(r.length, 9);
      assert.ok(
        ["triage", "output"].includes(r[4]!) && ["approved", "rejected", "auto", "timeout"].includes(r[5]!),
        r.join(","),
      );
      assert.equal(r.slice(6), ["", "", ""], "no actor on these fixture verdicts");
    }
    assert.match(
      verdicts.lines.at(-1)!,
      new RegExp(`^${decided.id},[^,]+,lstc9,lstc9-1,output,approved,token,tok_abc,"ci, ""bot"""$`),
    );
    const history = await readLines(server, "/api/export/trust-history");
    assert.is(history.lines[0], "id,at,holder,task_type,verdict,subject,from,to,actor,actor_token_id,actor_token_name");
    assert.is(history.lines.length, 1 + 2640);
    const odd = history.lines.find((l) => l.includes("Odd"))!;
    assert.match(odd, /^\d+,[^,]+,"Odd ""holder"", with comma",code,/);
    assert.match(odd, /,,,$/, "an entry that kept no decider has empty actor columns");
    const named = history.lines.filter((l) => l.includes(",Munin,writing,"));
    assert.is(named.length, 1100);
    const ACTOR_CELLS = [",owner,,", ',token,tok_1,"night, ""B"""', ",system,,", ",link,,"];
    named.forEach((line, i) => {
      assert.ok(line.endsWith(ACTOR_CELLS[i % 4]!), `row ${i}: ${line}`);
    });
    // Cut after 2,100 rows and resumed from the last id: the same rows, once each.
    const cut = await readLines(server, "/api/export/trust-history", 2101);
    const lastId = Number(cut.lines.at(-1)!.split(",")[0]);
    const rest = await readLines(server, `/api/export/trust-history?after=${lastId}`);
    assert.is(rest.lines[0], history.lines[0], "each transfer starts with the header");
    assert.equal([...cut.lines.slice(1), ...rest.lines.slice(1)], history.lines.slice(1));
  }));

test("a read-only token may export; bad parameters are a 400; a short export of nothing is empty", () =>
  withServer(async (server) => {
    await fill(server, 30, "d");
    const asReader = await readLines(server, "/api/export/events", Infinity, READER);
    assert.is(asReader.status, 200);
    assert.is(asReader.lines.length, 30);
    assert.is((await readLines(server, "/api/export/events", Infinity, "not-a-token-at-all-000000000000")).status, 401);
    for (const query of ["after=-1", "after=x", "after=1.5", "stream=a&stream=b", "after=99999999999999999999"]) {
      const res = await server.request("GET", `/api/export/events?${query}`, undefined, {
        authorization: `Bearer ${OWNER}`,
      });
      assert.is(res.status, 400, query);
      assert.type(res.body.message, "string");
    }
    const past = await readLines(server, "/api/export/events?after=100000");
    assert.equal([past.status, past.lines], [200, []]);
    assert.equal((await readLines(server, "/api/export/events?stream=nest:nowhere")).lines, []);
  }));

test.run();
