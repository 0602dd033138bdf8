// A full disk under a live server (a real process on a small tmpfs filled to the brim): writes get
// a 503 with Retry-After that says storage is failing (REST) or a STORAGE_UNAVAILABLE error
// (GraphQL), never a 500; /readyz turns 503 and back to 200 once space is freed; and a fresh
// replay after a restart holds exactly the lists the clients were told were accepted.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { rmSync } from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { startServerProcess } from "../helpers/process.ts";
import { baseEnv } from "../helpers/crows-cli.ts";
import { waitFor } from "../helpers/crows-cli.ts";
import { dataFolderIn, tmpfs } from "../helpers/tmpfs.ts";

const disk = tmpfs("faults-disk-full", 24 * 1024 * 1024);

async function post(url: string, body: unknown): Promise<{ status: number; body: any; retryAfter: string | null }> {
  const response = await fetch(`${url}/api/lists`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : undefined,
    retryAfter: response.headers.get("retry-after"),
  };
}

async function readyz(url: string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: await response.json() };
}

function storedListIds(dir: string): string[] {
  const db = new Database(path.join(dir, "crows.db"), { readonly: true });
  try {
    const rows = db.prepare("SELECT payload FROM Event WHERE name = 'list.started' ORDER BY id").all() as Array<{
      payload: string;
    }>;
    return rows.map((r) => (JSON.parse(r.payload) as { list_id: string }).list_id);
  } finally {
    db.close();
  }
}

if (disk) {
  test.after(() => disk.unmount());

  test("a full disk: 503 + Retry-After naming storage, GraphQL coded, /readyz 503 then 200, nothing acknowledged lost or doubled", async () => {
    const dir = dataFolderIn(disk.mount);
    const server = await startServerProcess(baseEnv(dir));
    const accepted: string[] = [];
    let n = 0;
    const submit = async () => {
      n++;
      return post(server.url, { text: `water the plants ${n}\nfeed the crows ${n}`, requester: `disk-full-${n}` });
    };
    try {
      for (let i = 0; i < 5; i++) {
        const answer = await submit();
        assert.is(answer.status, 202, JSON.stringify(answer.body));
        accepted.push(answer.body.list_id);
      }
      assert.is((await readyz(server.url)).status, 200);

      const filler = disk.fill();
      const refused: Array<{ status: number; body: any; retryAfter: string | null }> = [];
      // SQLite may still have room in pages it holds: keep writing until the disk says no.
      for (let i = 0; i < 60 && refused.length < 5; i++) {
        const answer = await submit();
        assert.ok(
          answer.status === 202 || answer.status === 503,
          `a write on a full disk is a 202 or a 503, got ${answer.status} ${JSON.stringify(answer.body)}`,
        );
        if (answer.status === 202) accepted.push(answer.body.list_id);
        else refused.push(answer);
      }
      assert.ok(refused.length > 0, "a full disk refuses writes");
      for (const answer of refused) {
        assert.match(answer.body.message, /^Storage is failing/);
        assert.is(answer.body.storage, "disk_full");
        assert.ok(Number(answer.retryAfter) > 0, "Retry-After is set");
      }
      const notReady = await readyz(server.url);
      assert.is(notReady.status, 503);
      assert.match(notReady.body.checks.storage, /disk_full/);

      const graphql = await fetch(`${server.url}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          query:
            'mutation { submitList(text: "dust the shelves", requester: "disk-full-gql") { ... on SubmittedList { listId } } }',
        }),
      });
      const answer = (await graphql.json()) as {
        data?: unknown;
        errors?: Array<{ message: string; extensions?: { code?: string } }>;
      };
      if (answer.errors) {
        assert.is(answer.errors[0]?.extensions?.code, "STORAGE_UNAVAILABLE", JSON.stringify(answer));
        assert.match(answer.errors[0]!.message, /^Storage is failing/);
      } else {
        accepted.push((answer.data as { submitList: { listId: string } }).submitList.listId);
      }
      assert.is(server.child.exitCode, null, "the server lives on");

      rmSync(filler);
      await waitFor("/readyz 200 once space is freed", async () => (await readyz(server.url)).status === 200, 30_000);
      const after = await submit();
      assert.is(after.status, 202);
      accepted.push(after.body.list_id);

      server.child.kill("SIGTERM");
      assert.is(await server.exited, 0, server.output().stderr);
      const stored = storedListIds(dir);
      assert.equal([...stored].sort(), [...accepted].sort(), "the stored lists are exactly the acknowledged ones");
    } finally {
      if (server.child.exitCode === null) server.child.kill("SIGKILL");
    }
  });
}

test.run();
