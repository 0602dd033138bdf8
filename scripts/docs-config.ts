// Writes docs/configuration.md's settings tables from their declarations in src/base/settings/
// (npm run docs:config). test/unit/config-docs.test.ts fails when the committed file differs.
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { withSections } from "../src/base/settings/docs.ts";

const file = fileURLToPath(new URL("../docs/configuration.md", import.meta.url));
const before = readFileSync(file, "utf8");
const after = withSections(before);
if (after !== before) writeFileSync(file, after);
console.log(after === before ? "docs/configuration.md: tables already match" : "docs/configuration.md: tables written");
