// The nest store, the spun-crow registry and the crew picker against a real SQLite database:
// every guardrail's error class and message, the caps, and core-first rotation with borrowing.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { loadConfig } from "../../src/base/config.ts";
import { openDatabase, type DatabaseHandle, type PrismaClient } from "../../src/storage/db.ts";
import { BadInputError, ConflictError } from "../../src/base/errors.ts";
import { NestStore, slugOf, MAX_NESTS } from "../../src/nests/store.ts";
import {
  CrowRegistry,
  SPIN_REFUSALS,
  spinRefusalReason,
  SpinBadInputError,
  SpinNameTakenError,
} from "../../src/nests/registry.ts";
import { CrewPicker, PrismaCrewDirectory } from "../../src/flock/crew.ts";
import { ROSTER } from "../../src/base/roster.ts";

interface Ctx {
  database: DatabaseHandle;
  prisma: PrismaClient;
  nests: NestStore;
  registry: CrowRegistry;
  dir: string;
}

async function open(maxSpun = 8): Promise<Ctx> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "crows-nests-"));
  const database = await openDatabase(loadConfig({ CROWS_DATA_DIR: dir }));
  const prisma = database.prisma;
  const nests = new NestStore(prisma);
  await nests.ensureDefault();
  return { database, prisma, nests, registry: new CrowRegistry(prisma, maxSpun), dir };
}

async function close(ctx: Ctx): Promise<void> {
  await ctx.prisma.$disconnect();
  rmSync(ctx.dir, { recursive: true, force: true });
}

async function refusal(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a refusal, got success");
}

test("slugOf folds case, accents and punctuation into single dashes", () => {
  assert.is(slugOf("Launch copy"), "launch-copy");
  assert.is(slugOf("  --Café  Déjà__Vu!!  "), "cafe-deja-vu");
  assert.is(slugOf("Q3 / Q4 plans"), "q3-q4-plans");
  assert.is(slugOf("!!!"), "");
  assert.is(slugOf("日本"), "");
});

test("todo always exists, first, with an empty core; ensureDefault is idempotent", async () => {
  const ctx = await open();
  try {
    await ctx.nests.ensureDefault();
    assert.equal(await ctx.nests.list(), [{ id: "todo", name: "todo", crows: [] }]);
    assert.equal(await ctx.nests.get("todo"), { id: "todo", name: "todo", crows: [] });
    assert.is(await ctx.nests.get("nope"), null);
  } finally {
    await close(ctx);
  }
});

test("create stores the trimmed name, the slug and the core in order", async () => {
  const ctx = await open();
  try {
    const nest = await ctx.nests.create({ name: "  Launch copy ", crows: ["Pepper", "Inky"] });
    assert.equal(nest, { id: "launch-copy", name: "Launch copy", crows: ["Pepper", "Inky"] });
    await ctx.nests.create({ name: "Errands", crows: ["Rook"] });
    assert.equal(
      (await ctx.nests.list()).map((n) => n.id),
      ["todo", "launch-copy", "errands"],
    );
    assert.equal(await ctx.nests.get("launch-copy"), nest);
  } finally {
    await close(ctx);
  }
});

test("create refuses every broken guardrail with a BadInputError naming it", async () => {
  const ctx = await open();
  try {
    const cases: [unknown, unknown, RegExp][] = [
      [undefined, ["Pepper"], /name must be a string/],
      [42, ["Pepper"], /name must be a string/],
      ["   ", ["Pepper"], /1-40 characters after trimming, got 0/],
      ["x".repeat(41), ["Pepper"], /1-40 characters after trimming, got 41/],
      ["!!!", ["Pepper"], /no letters or digits/],
      ["Ok", undefined, /crows must be an array/],
      ["Ok", "Pepper", /crows must be an array/],
      ["Ok", [], /1-8 crows, got 0/],
      ["Ok", [...ROSTER, "Pepper"], /1-8 crows, got 9/],
      ["Ok", ["Pepper", 7], /strings/],
      ["Ok", ["Pepper", "Pepper"], /Pepper twice/],
      ["Ok", ["Nobody"], /"Nobody" is not a crow in the flock/],
      ["Ok", ["pepper"], /Did you mean "Pepper"\?/],
      ["Ok", ["Pepper", "Sentry"], /Sentry is a service role/],
      ["Ok", ["Elder"], /Elder is a service role/],
      ["Ok", ["quill"], /Quill is a service role/],
      ["Ok", ["Boss"], /Boss is a service role/],
    ];
    for (const [name, crows, message] of cases) {
      const error = await refusal(ctx.nests.create({ name, crows }));
      assert.instance(error, BadInputError, `${JSON.stringify(name)} ${JSON.stringify(crows)}`);
      assert.match(error.message, message);
    }
    assert.equal(await ctx.nests.list(), [{ id: "todo", name: "todo", crows: [] }]);
    // 40 characters after trimming is fine; 8 crows is fine.
    const long = await ctx.nests.create({ name: `  ${"y".repeat(40)}  `, crows: [...ROSTER] });
    assert.is(long.name.length, 40);
    assert.equal(long.crows, [...ROSTER]);
  } finally {
    await close(ctx);
  }
});

test("a slug clash is a ConflictError, whatever the case or punctuation, and todo is taken", async () => {
  const ctx = await open();
  try {
    await ctx.nests.create({ name: "Launch copy", crows: ["Pepper"] });
    for (const name of ["Launch copy", "LAUNCH COPY", "launch--copy!", "Todo", "todo"]) {
      const error = await refusal(ctx.nests.create({ name, crows: ["Inky"] }));
      assert.instance(error, ConflictError, name);
      assert.match(error.message, /already exists/);
    }
  } finally {
    await close(ctx);
  }
});

test("at most 20 nests, todo included; the owner's 20th is a BadInputError", async () => {
  const ctx = await open();
  try {
    for (let i = 1; i < MAX_NESTS; i++) await ctx.nests.create({ name: `Nest ${i}`, crows: ["Hugin"] });
    const error = await refusal(ctx.nests.create({ name: "One more", crows: ["Hugin"] }));
    assert.instance(error, BadInputError);
    assert.match(error.message, /At most 20 nests, todo included; there are already 20/);
    assert.is((await ctx.nests.list()).length, MAX_NESTS);
  } finally {
    await close(ctx);
  }
});

test("a spun crow can be a core member; removeMember takes a crow out of a core", async () => {
  const ctx = await open();
  try {
    await ctx.registry.spin({ name: "Ada", persona: "Inky", trust: "stranger" });
    const nest = await ctx.nests.create({ name: "Code", crows: ["Ada", "Inky"] });
    assert.equal(nest.crows, ["Ada", "Inky"]);
    assert.is(await ctx.nests.removeMember("code", "Inky"), true);
    assert.is(await ctx.nests.removeMember("code", "Inky"), false);
    assert.equal((await ctx.nests.get("code"))?.crows, ["Ada"]);
  } finally {
    await close(ctx);
  }
});

test("spin stores a crow; trusted is clamped to regular; names sort case-insensitively", async () => {
  const ctx = await open();
  try {
    assert.equal(await ctx.registry.list(), []);
    assert.equal(await ctx.registry.spin({ name: " Zed ", persona: "pepper", trust: "trusted" }), {
      name: "Zed",
      persona: "Pepper",
      trust: "regular",
    });
    assert.equal(await ctx.registry.spin({ name: "ada", persona: "Hugin" }), {
      name: "ada",
      persona: "Hugin",
      trust: "stranger",
    });
    assert.equal(await ctx.registry.spin({ name: "Bryn", persona: "Rook", trust: "Regular" }), {
      name: "Bryn",
      persona: "Rook",
      trust: "regular",
    });
    assert.equal(
      (await ctx.registry.list()).map((c) => c.name),
      ["ada", "Bryn", "Zed"],
    );
    assert.equal(await ctx.registry.get("Zed"), { name: "Zed", persona: "Pepper", trust: "regular" });
    // The ledger starts a spun crow at the trust it was given, never above regular.
    const directory = new PrismaCrewDirectory(ctx.database, ctx.nests);
    assert.is(await directory.startingLevel("Zed"), 1);
    assert.is(await directory.startingLevel("ada"), 0);
    assert.is(await directory.personaOf("Zed"), "Pepper");
    const flock = await directory.flock();
    assert.equal(flock.slice(0, 8), [...ROSTER]);
    assert.equal(new Set(flock.slice(8)), new Set(["ada", "Bryn", "Zed"]));
  } finally {
    await close(ctx);
  }
});

test("spin refusals carry the stable reasons Boss says", async () => {
  const ctx = await open();
  try {
    await ctx.registry.spin({ name: "Ada", persona: "Inky" });
    const taken: [string, RegExp][] = [
      ["Pepper", /roster crow Pepper/],
      ["hugin", /roster crow Hugin/],
      ["Sentry", /service role Sentry/],
      ["BOSS", /service role Boss/],
      ["ada", /spun crow Ada/],
      ["Owner", /reserved/],
      ["flock", /reserved/],
    ];
    for (const [name, message] of taken) {
      const error = await refusal(ctx.registry.spin({ name, persona: "Inky" }));
      assert.instance(error, SpinNameTakenError, name);
      assert.instance(error, ConflictError);
      assert.is(spinRefusalReason(error), SPIN_REFUSALS.nameTaken);
      assert.match(error.message, /^name taken: /);
      assert.match(error.message, message);
    }
    const bad: [Record<string, unknown>, string, RegExp][] = [
      [{ name: "Bo", persona: "Nobody" }, SPIN_REFUSALS.personaUnknown, /^persona unknown: "Nobody"/],
      [{ name: "Bo", persona: "Boss" }, SPIN_REFUSALS.personaUnknown, /^persona unknown/],
      [{ name: "Bo", persona: 3 }, SPIN_REFUSALS.personaUnknown, /^persona unknown/],
      [{ name: "Bo", persona: "Inky", trust: "owner" }, SPIN_REFUSALS.trustInvalid, /^trust invalid/],
      [{ name: "Bo", persona: "Inky", trust: 2 }, SPIN_REFUSALS.trustInvalid, /^trust invalid/],
      [{ name: "", persona: "Inky" }, SPIN_REFUSALS.nameInvalid, /got 0/],
      [{ name: "x".repeat(41), persona: "Inky" }, SPIN_REFUSALS.nameInvalid, /got 41/],
      [{ name: 5, persona: "Inky" }, SPIN_REFUSALS.nameInvalid, /must be a string/],
      [{ name: "Bo<script>", persona: "Inky" }, SPIN_REFUSALS.nameInvalid, /letters, digits, spaces/],
      [{ name: "-Bo", persona: "Inky" }, SPIN_REFUSALS.nameInvalid, /start with a letter or digit/],
    ];
    for (const [input, reason, message] of bad) {
      const error = await refusal(ctx.registry.spin(input as never));
      assert.instance(error, SpinBadInputError, JSON.stringify(input));
      assert.instance(error, BadInputError);
      assert.is(spinRefusalReason(error), reason);
      assert.match(error.message, message);
    }
    assert.is(spinRefusalReason(new Error("x")), undefined);
    assert.ok(await ctx.registry.spin({ name: "Mary-Jane O'Neil Jr.", persona: "Sable" }));
    assert.equal(
      (await ctx.registry.list()).map((c) => c.name),
      ["Ada", "Mary-Jane O'Neil Jr."],
    );
  } finally {
    await close(ctx);
  }
});

test("the registry cap refuses with cap reached, and retiring frees a seat", async () => {
  const ctx = await open(2);
  try {
    await ctx.registry.spin({ name: "One", persona: "Inky" });
    await ctx.registry.spin({ name: "Two", persona: "Inky" });
    const error = await refusal(ctx.registry.spin({ name: "Three", persona: "Inky" }));
    assert.is(spinRefusalReason(error), SPIN_REFUSALS.capReached);
    assert.instance(error, BadInputError);
    assert.match(error.message, /^cap reached: .*at most 2 \(CROWS_MAX_SPUN\)/);
    // Concurrent spins cannot slip past the cap.
    assert.is(await ctx.registry.delete("Two"), true);
    const results = await Promise.allSettled([
      ctx.registry.spin({ name: "A1", persona: "Inky" }),
      ctx.registry.spin({ name: "A2", persona: "Inky" }),
    ]);
    assert.equal(results.map((r) => r.status).sort(), ["fulfilled", "rejected"]);
    assert.is((await ctx.registry.list()).length, 2);
  } finally {
    await close(ctx);
  }
});

test("default cap is CROWS_MAX_SPUN's default of 8", async () => {
  const ctx = await open(loadConfig({}).maxSpun);
  try {
    for (let i = 0; i < 8; i++) await ctx.registry.spin({ name: `Crow ${i}`, persona: ROSTER[i] });
    assert.is(
      spinRefusalReason(await refusal(ctx.registry.spin({ name: "Crow 8", persona: "Inky" }))),
      SPIN_REFUSALS.capReached,
    );
  } finally {
    await close(ctx);
  }
});

test("retiring a spun crow removes it from cores; its name stays taken while its record does", async () => {
  const ctx = await open();
  try {
    await ctx.registry.spin({ name: "Ada", persona: "Inky", trust: "regular" });
    await ctx.registry.spin({ name: "Bea", persona: "Inky" });
    await ctx.nests.create({ name: "Code", crows: ["Inky", "Ada"] });
    await ctx.prisma.trust.create({ data: { holder: "Ada", taskType: "code", level: 2 } });
    assert.is(await ctx.registry.delete("Ada"), true);
    assert.is(await ctx.registry.delete("Ada"), false);
    assert.is(await ctx.registry.get("Ada"), null);
    assert.equal((await ctx.nests.get("code"))?.crows, ["Inky"]);
    // Re-spinning "Ada" would inherit its earned (trusted) ledger record.
    const error = await refusal(ctx.registry.spin({ name: "Ada", persona: "Inky" }));
    assert.is(spinRefusalReason(error), SPIN_REFUSALS.nameTaken);
    assert.match(error.message, /was a crow before/);
    // A retired crow with no record at all frees its name.
    assert.is(await ctx.registry.delete("Bea"), true);
    assert.ok(await ctx.registry.spin({ name: "Bea", persona: "Hugin" }));
    // A retired, quarantined name stays taken too.
    await ctx.prisma.quarantine.create({
      data: { crow: "Cy", nestId: "todo", flagMsgId: "todo-1", askMsgId: "todo-2", referent: "todo-0" },
    });
    assert.is(
      spinRefusalReason(await refusal(ctx.registry.spin({ name: "Cy", persona: "Inky" }))),
      SPIN_REFUSALS.nameTaken,
    );
  } finally {
    await close(ctx);
  }
});

test("picker: a two-crow core asked for 3 borrows exactly one, rotating over several picks", async () => {
  const ctx = await open();
  try {
    await ctx.nests.create({ name: "Launch copy", crows: ["Pepper", "Inky"] });
    const picker = new CrewPicker(new PrismaCrewDirectory(ctx.database, ctx.nests));
    const outside = ROSTER.filter((c) => c !== "Pepper" && c !== "Inky");
    const borrowedSeen: string[] = [];
    const firstCore: string[] = [];
    for (let round = 0; round < 4; round++) {
      const picks = await picker.pick("launch-copy", 3);
      assert.is(picks.length, 3);
      assert.equal(
        picks.slice(0, 2).map((p) => p.borrowed),
        [false, false],
      );
      assert.equal(new Set(picks.slice(0, 2).map((p) => p.crow)), new Set(["Pepper", "Inky"]));
      assert.is(picks.filter((p) => p.borrowed).length, 1);
      const borrowed = picks[2]!;
      assert.ok(outside.includes(borrowed.crow), borrowed.crow);
      borrowedSeen.push(borrowed.crow);
      firstCore.push(picks[0]!.crow);
    }
    // Borrowing rotates through the rest of the flock in order.
    assert.equal(borrowedSeen, outside.slice(0, 4));
    // Solo flights rotate within the core.
    const solos = [];
    for (let i = 0; i < 4; i++) solos.push((await picker.pick("launch-copy", 1))[0]);
    assert.equal(new Set(solos.map((p) => p!.crow)), new Set(["Pepper", "Inky"]));
    assert.ok(solos.every((p) => !p!.borrowed));
    assert.not.equal(solos[0]!.crow, solos[1]!.crow);
  } finally {
    await close(ctx);
  }
});

test("picker: todo never borrows; quarantined and excluded crows are skipped; spun crows fly", async () => {
  const ctx = await open();
  try {
    await ctx.registry.spin({ name: "Ada", persona: "Inky" });
    await ctx.nests.create({ name: "Pair", crows: ["Pepper", "Ada"] });
    const picker = new CrewPicker(new PrismaCrewDirectory(ctx.database, ctx.nests));
    const seen = new Set<string>();
    for (let i = 0; i < 6; i++) {
      const picks = await picker.pick("todo", 3);
      assert.is(picks.length, 3);
      assert.ok(picks.every((p) => !p.borrowed));
      picks.forEach((p) => {
        seen.add(p.crow);
      });
    }
    assert.ok(seen.has("Ada"), "the spun crow flies from todo like any crow");
    await ctx.prisma.quarantine.create({
      data: { crow: "Pepper", nestId: "pair", flagMsgId: "pair-1", askMsgId: "pair-2", referent: "pair-0" },
    });
    await ctx.prisma.quarantine.create({
      data: { crow: "Hugin", nestId: "pair", flagMsgId: "pair-3", askMsgId: "pair-4", referent: "pair-5" },
    });
    for (let i = 0; i < 5; i++) {
      const picks = await picker.pick("pair", 3, new Set(["Munin"]));
      assert.is(picks[0]!.crow, "Ada");
      assert.is(picks[0]!.borrowed, false);
      assert.is(picks.filter((p) => p.borrowed).length, 2);
      assert.ok(
        picks.every((p) => !["Pepper", "Hugin", "Munin"].includes(p.crow)),
        JSON.stringify(picks),
      );
    }
    // A reinstated crow flies again.
    await ctx.prisma.quarantine.updateMany({ where: { crow: "Pepper" }, data: { status: "reinstated" } });
    const picks = await picker.pick("pair", 2);
    assert.equal(new Set(picks.map((p) => p.crow)), new Set(["Pepper", "Ada"]));
    assert.ok(picks.every((p) => !p.borrowed));
  } finally {
    await close(ctx);
  }
});

test("picker: rotations are stored, so a new picker (a restart, another instance) carries each one on", async () => {
  const ctx = await open();
  try {
    await ctx.nests.create({ name: "Ops", crows: ["Inky", "Rook", "Pepper"] });
    const directory = new PrismaCrewDirectory(ctx.database, ctx.nests);
    const outside = ROSTER.filter((c) => !["Inky", "Rook", "Pepper"].includes(c));
    const taken: string[] = [];
    const borrowedTaken: string[] = [];
    // A fresh picker for every pick: nothing is remembered in memory between them.
    for (let i = 0; i < 7; i++) taken.push((await new CrewPicker(directory).pick("ops", 1))[0]!.crow);
    assert.equal(taken, ["Inky", "Rook", "Pepper", "Inky", "Rook", "Pepper", "Inky"]);
    for (let i = 0; i < 3; i++) borrowedTaken.push((await new CrewPicker(directory).pick("ops", 4))[3]!.crow);
    assert.equal(borrowedTaken, outside.slice(0, 3), "the borrow rotation carries on too");
    // Concurrent picks in one process still rotate: they take turns on the cursor.
    const picker = new CrewPicker(directory);
    const together = await Promise.all([0, 1, 2].map(() => picker.pick("ops", 1)));
    assert.equal(new Set(together.map((p) => p[0]!.crow)).size, 3, "three picks at once take three crows");
  } finally {
    await close(ctx);
  }
});

test.run();
