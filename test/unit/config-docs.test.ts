// docs/configuration.md's tables are written from the settings' declarations (npm run
// docs:config): this fails when the committed tables differ from what the declarations write, and
// when a variable the code reads is missing from them.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderSection, SECTIONS, sectionsIn } from "../../src/base/settings/docs.ts";
import { SETTINGS } from "../../src/base/settings/index.ts";

const DOC = fileURLToPath(new URL("../../docs/configuration.md", import.meta.url));
const README = fileURLToPath(new URL("../../README.md", import.meta.url));
const SRC = fileURLToPath(new URL("../../src", import.meta.url));

/** Read outside the settings on purpose: the migration tool's own (a developer's, not a server's). */
const NOT_SETTINGS = new Set(["CROWS_DEBUG_MIGRATE", "CROWS_TEST_PG_URL"]);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "generated" ? [] : sources(full);
    return /\.(ts|mjs)$/.test(entry.name) ? [full] : [];
  });
}

test("the committed tables are the declarations' (run npm run docs:config after changing a setting)", () => {
  const found = sectionsIn(readFileSync(DOC, "utf8"));
  for (const section of SECTIONS) {
    assert.ok(found[section] !== undefined, `docs/configuration.md has the markers of ${section}`);
    assert.fixture(found[section]!, renderSection(section));
  }
});

test("every variable is in exactly one table, owner settings apart from the knobs", () => {
  const rowsOf = (markdown: string) => markdown.split("\n").map((line) => line.split("|")[1]?.trim());
  const owner = rowsOf(renderSection("owner"));
  const tuning = rowsOf(renderSection("tuning"));
  for (const { setting } of SETTINGS) {
    assert.is(owner.includes(setting.env), setting.audience === "owner", `${setting.env} in the owner table`);
    assert.is(tuning.includes(setting.env), setting.audience === "tuning", `${setting.env} with the knobs`);
  }
});

test("the README names every owner setting", () => {
  const readme = readFileSync(README, "utf8");
  for (const { setting } of SETTINGS) {
    if (setting.audience === "owner") assert.ok(readme.includes(setting.env), `README names ${setting.env}`);
  }
});

test("every variable src/ reads by name is a declared setting", () => {
  const declared = new Set(SETTINGS.flatMap(({ setting }) => [setting.env, setting.deprecated?.env]));
  for (const file of sources(SRC)) {
    const text = readFileSync(file, "utf8");
    for (const [, name] of text.matchAll(/env(?:\.|\[")((?:CROWS_|DATABASE_URL|REDIS_URL)[A-Z_]*|[A-Z]+_API_KEY)\b/g))
      assert.ok(
        declared.has(name!) || NOT_SETTINGS.has(name!),
        `${path.relative(SRC, file)} reads ${name}, not declared`,
      );
  }
});

test.run();
