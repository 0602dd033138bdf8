// A self-contained repository: every rule the code cites can be opened in this clone. The
// contract and the rules it leans on are restated in docs/contract.md and docs/flock.md; this test
// fails on a citation of a spec file the repository does not hold, and on a citation of a
// docs/flock.md section or a docs/contract.md heading that does not exist.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const tracked = execFileSync("git", ["ls-files"], { cwd: ROOT, encoding: "utf8" })
  .split("\n")
  .filter((f) => /\.(ts|tsx|mts|mjs|md|graphql|sh)$/.test(f) || f === ".ci/run")
  .filter((f) => f !== "CHANGELOG.md" && !f.startsWith("test/fixtures/"));
const read = (f: string) => readFileSync(path.join(ROOT, f), "utf8");

/** "4", "4.5" for every `## N.` heading and every numbered step under it. */
function flockSections(): Set<string> {
  const sections = new Set<string>();
  let current = "";
  for (const line of read("docs/flock.md").split("\n")) {
    const heading = /^## (\d+)\./.exec(line);
    if (heading) sections.add((current = heading[1]!));
    const step = /^(\d+)\. /.exec(line);
    if (step && current) sections.add(`${current}.${step[1]}`);
  }
  return sections;
}

test("no file cites a spec file the repository does not hold", () => {
  const self = "test/unit/citations.test.ts";
  const citing = tracked.filter((f) => f !== self && /\b(EVENTS|FLOCK)\.md\b/.test(read(f)));
  assert.equal(citing, [], "cite docs/contract.md or docs/flock.md instead");
});

test("every docs/flock.md section cited exists", () => {
  const sections = flockSections();
  assert.ok(sections.has("4.5") && sections.has("11"), "the sections are read");
  const missing: string[] = [];
  for (const f of tracked) {
    for (const m of read(f).matchAll(/flock\.md (§[\d.]+(?:(?:, | and )§[\d.]+)*)/g)) {
      for (const ref of m[1]!.matchAll(/§(\d+(?:\.\d+)?)/g)) {
        if (!sections.has(ref[1]!)) missing.push(`${f}: §${ref[1]}`);
      }
    }
  }
  assert.equal(missing, []);
});

test("every docs/contract.md heading cited by name exists", () => {
  const headings = new Set(
    read("docs/contract.md")
      .split("\n")
      .filter((l) => l.startsWith("#"))
      .map((l) => l.replace(/^#+\s*/, "").toLowerCase()),
  );
  const missing: string[] = [];
  for (const f of tracked) {
    for (const m of read(f).matchAll(/contract\.md "([^"]+)"/g)) {
      if (!headings.has(m[1]!.toLowerCase())) missing.push(`${f}: "${m[1]}"`);
    }
  }
  assert.equal(missing, []);
});

test.run();
