// Writes schema/schema.graphql from the Pothos schema (npm run schema:print).
import { writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { printedSchema, SCHEMA_FILE } from "../schema/print.ts";

writeFileSync(SCHEMA_FILE, printedSchema());
console.log(`wrote ${fileURLToPath(SCHEMA_FILE)}`);
