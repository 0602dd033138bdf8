// The floors: every source folder sits on one floor and imports only from floors below it (or from
// itself). This test reads the relative imports of every source file, maps each to its floor, and
// fails on an arrow the map does not allow, on a cycle between folders, and on a cycle between files
// inside src, naming the file and line. The map is stated here once; docs/architecture.md "Floors"
// carries the same block, and the last test keeps the two alike.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Bottom to top. Folders on one floor do not import each other; a folder may import itself. */
const FLOORS: ReadonlyArray<readonly [floor: string, folders: readonly string[]]> = [
  ["base", ["src/base"]],
  ["generated", ["src/generated"]],
  ["storage", ["src/storage"]],
  ["log", ["src/log"]],
  ["access", ["src/access"]],
  ["models, classifier, tools", ["src/models", "src/classifier", "src/tools"]],
  ["engine", ["src/engine"]],
  ["flock", ["src/flock"]],
  ["nests", ["src/nests"]],
  ["telemetry", ["src/telemetry"]],
  ["webhooks", ["src/webhooks"]],
  ["app", ["src/app.ts"]],
  ["http", ["src/http"]],
  ["contract surfaces", ["compat", "schema", "console"]],
  ["server", ["src/server"]],
  ["ops", ["src/ops"]],
  ["cli", ["src/cli"]],
  ["entry points", ["src/main.ts", "bin"]],
  ["harness", ["harness"]],
  ["tools and tests", ["scripts", "bench", "test"]],
];

/** src/ops is the top floor of the server itself: nothing but the cli and the entry points start it. */
const OPS_IMPORTERS = ["src/cli", "src/main.ts", "bin"];

/** Where the scan looks (test/ is a floor others must not import, but its own imports are free). */
const SCANNED = ["src", "schema", "compat", "console", "bin", "harness", "scripts", "bench"];
const SKIPPED = new Set(["node_modules", "generated", "dist"]);

interface Import {
  /** Repository-relative path of the importing file. */
  from: string;
  line: number;
  /** Repository-relative path the specifier resolves to. */
  to: string;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.posix.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) sourceFiles(rel, out);
    } else if (/\.(ts|tsx|mts|mjs|js)$/.test(entry.name) || dir === "bin") out.push(rel);
  }
  return out;
}

/**
 * The text with comments blanked (newlines kept, so offsets still give lines): a path named in a
 * comment is not an import. Strings and template literals are skipped over whole.
 */
function withoutComments(text: string): string {
  let out = "";
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === "/" && next === "/") {
      while (i < text.length && text[i] !== "\n") (out += " "), i++;
    } else if (c === "/" && next === "*") {
      const end = text.indexOf("*/", i + 2);
      const stop = end < 0 ? text.length : end + 2;
      out += text.slice(i, stop).replace(/[^\n]/g, " ");
      i = stop;
    } else if (c === '"' || c === "'" || c === "`") {
      let j = i + 1;
      while (j < text.length && text[j] !== c && (c === "`" || text[j] !== "\n")) j += text[j] === "\\" ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/** import ... from, export ... from, import "x", import("x"), import type: every relative one. */
const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(["'])(\.{1,2}\/[^"'\n]+)\1/g;

function importsOf(file: string): Import[] {
  const code = withoutComments(readFileSync(path.join(ROOT, file), "utf8"));
  const found: Import[] = [];
  for (const match of code.matchAll(IMPORT)) {
    const to = path.posix.normalize(path.posix.join(path.posix.dirname(file), match[2]!));
    found.push({ from: file, line: code.slice(0, match.index).split("\n").length, to });
  }
  return found;
}

/** The folder a path belongs to: src/<folder>, a file directly in src, or a top-level folder. */
function folderOf(file: string): string {
  const parts = file.split("/");
  if (parts[0] === "src") return parts.length === 2 ? file : `src/${parts[1]}`;
  return parts[0]!;
}

const FLOOR_OF = new Map<string, number>();
FLOORS.forEach(([, folders], index) => {
  folders.forEach((folder) => {
    FLOOR_OF.set(folder, index);
  });
});

const IMPORTS = SCANNED.flatMap((dir) => sourceFiles(dir)).flatMap(importsOf);
const where = (i: Import) => `${i.from}:${i.line} imports ${i.to}`;
const isBenchTest = (i: Import) => folderOf(i.from) === "bench" && folderOf(i.to) === "test";

/** Every cycle found by a depth-first walk, each as the path that closes it. */
function cyclesOf(edges: Map<string, Set<string>>): string[][] {
  const cycles: string[][] = [];
  const state = new Map<string, "open" | "done">();
  const trail: string[] = [];
  const visit = (node: string) => {
    state.set(node, "open");
    trail.push(node);
    for (const next of edges.get(node) ?? []) {
      if (state.get(next) === "open") cycles.push([...trail.slice(trail.indexOf(next)), next]);
      else if (!state.has(next)) visit(next);
    }
    trail.pop();
    state.set(node, "done");
  };
  for (const node of [...edges.keys()].sort()) if (!state.has(node)) visit(node);
  return cycles;
}

test("the scan finds the imports it is meant to read", () => {
  // A scan that found nothing would pass everything below.
  assert.ok(IMPORTS.length > 400, `only ${IMPORTS.length} imports found`);
  for (const [from, to] of [
    ["src/app.ts", "src/flock/flock.ts"],
    ["src/cli/main.ts", "src/ops/serve.ts"],
    ["bin/crows", "src/cli/main.ts"],
    ["schema/events.ts", "schema/wire.ts"],
  ] as const) {
    assert.ok(
      IMPORTS.some((i) => i.from === from && i.to === to),
      `${from} -> ${to} not found`,
    );
  }
});

test("every source folder is on a floor", () => {
  const unplaced = IMPORTS.flatMap((i) => [i.from, i.to])
    .map(folderOf)
    .filter((folder, index, all) => !FLOOR_OF.has(folder) && all.indexOf(folder) === index);
  assert.equal(unplaced, [], `on no floor (add to FLOORS here and in docs/architecture.md): ${unplaced.join(", ")}`);
});

test("every import goes down a floor or stays in its folder", () => {
  const wrong = IMPORTS.filter((i) => {
    const from = folderOf(i.from);
    const to = folderOf(i.to);
    if (from === to) return false;
    return !((FLOOR_OF.get(to) ?? Infinity) < (FLOOR_OF.get(from) ?? -Infinity));
  }).map(
    (i) =>
      `${where(i)} (${FLOORS[FLOOR_OF.get(folderOf(i.from)) ?? -1]?.[0]} -> ${FLOORS[FLOOR_OF.get(folderOf(i.to)) ?? -1]?.[0]})`,
  );
  assert.equal(wrong, [], `imports the floors do not allow:\n  ${wrong.join("\n  ")}`);
});

test("src/ops is imported only by the cli and the entry points", () => {
  const wrong = IMPORTS.filter(
    (i) => folderOf(i.to) === "src/ops" && folderOf(i.from) !== "src/ops" && !OPS_IMPORTERS.includes(folderOf(i.from)),
  ).map(where);
  assert.equal(wrong, [], `src/ops imported from below:\n  ${wrong.join("\n  ")}`);
});

test("no cycle between folders", () => {
  const edges = new Map<string, Set<string>>();
  for (const i of IMPORTS) {
    const from = folderOf(i.from);
    const to = folderOf(i.to);
    if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to));
  }
  const cycles = cyclesOf(edges).map((cycle) => {
    const witnesses = cycle
      .slice(1)
      .map((to, n) => IMPORTS.find((i) => folderOf(i.from) === cycle[n] && folderOf(i.to) === to)!);
    return `${cycle.join(" -> ")}\n    ${witnesses.map(where).join("\n    ")}`;
  });
  assert.equal(cycles, [], `folder cycles:\n  ${cycles.join("\n  ")}`);
});

test("no cycle between files inside src", () => {
  const edges = new Map<string, Set<string>>();
  for (const i of IMPORTS) {
    if (i.from.startsWith("src/") && i.to.startsWith("src/"))
      edges.set(i.from, (edges.get(i.from) ?? new Set()).add(i.to));
  }
  const cycles = cyclesOf(edges).map((cycle) =>
    cycle
      .slice(1)
      .map((to, n) => where(IMPORTS.find((i) => i.from === cycle[n] && i.to === to)!))
      .join(", then "),
  );
  assert.equal(cycles, [], `file cycles:\n  ${cycles.join("\n  ")}`);
});

test("bench imports no test helper: what both need lives in harness/", () => {
  const found = IMPORTS.filter(isBenchTest).map(where);
  assert.equal(found, [], `bench imports test helpers (move the shared piece to harness/):\n  ${found.join("\n  ")}`);
});

test("every imported path exists", () => {
  const missing = IMPORTS.filter((i) => {
    try {
      return !statSync(path.join(ROOT, i.to)).isFile();
    } catch {
      return true;
    }
  }).map(where);
  assert.equal(missing, [], missing.join("\n"));
});

test("docs/architecture.md states the same floors", () => {
  const block = FLOORS.map(
    ([floor, folders], n) => `${String(n + 1).padStart(2)}. ${floor}: ${folders.join(", ")}`,
  ).join("\n");
  const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
  assert.ok(
    doc.includes("```\n" + block + "\n```"),
    `docs/architecture.md "Floors" should hold, in a code block:\n${block}`,
  );
});

test.run();
