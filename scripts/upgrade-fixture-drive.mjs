// Drives an old crows server (scripts/upgrade-fixture.sh) to a fixture state: some lists finished
// through owner verdicts (trust changes), some left running on pending approvals.
import Database from "better-sqlite3";
const [url, dbFile] = process.argv.slice(2);
const post = async (p, body) => {
  const r = await fetch(url + p, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: r.status, text: await r.text() };
};
const ids = [];
for (let i = 0; i < 6; i++) {
  const r = await post("/api/lists", {
    text: `research the best crow feeders ${i}\nwrite a short poem about rain ${i}\ncompare two bird field guides ${i}`,
    requester: `fixture-owner-${i}`,
  });
  ids.push(JSON.parse(r.text).list_id);
}
const finishing = new Set(ids.slice(0, 3));
const deadline = Date.now() + 60000;
let decided = 0;
while (Date.now() < deadline) {
  const db = new Database(dbFile, { readonly: true });
  const pending = db
    .prepare(
      "SELECT a.itemId AS itemId, a.target AS target, i.listId AS listId FROM Approval a JOIN Item i ON i.id = a.itemId WHERE a.status = 'pending'",
    )
    .all();
  const finished = db
    .prepare("SELECT id FROM TodoList WHERE status = 'finished'")
    .all()
    .map((r) => r.id);
  db.close();
  for (const p of pending)
    if (finishing.has(p.listId)) {
      await post("/api/verdicts", { item_id: p.itemId, target: p.target, approve: decided++ % 3 !== 2 });
    }
  if ([...finishing].every((id) => finished.includes(id)) && pending.some((p) => !finishing.has(p.listId))) break;
  await new Promise((r) => setTimeout(r, 300));
}
console.log(JSON.stringify({ ids, decided }));
