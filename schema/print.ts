// The schema as SDL, sorted so a change shows as its own lines: schema/schema.graphql is this text,
// committed (npm run schema:print writes it; test/schema-print.test.ts fails when it is stale).
import { lexicographicSortSchema, printSchema } from "graphql";
import { schema } from "./index.ts";

export const SCHEMA_FILE = new URL("./schema.graphql", import.meta.url);

export function printedSchema(): string {
  return printSchema(lexicographicSortSchema(schema)) + "\n";
}
