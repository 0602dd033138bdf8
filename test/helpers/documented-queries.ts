// The GraphQL documents a client is shown or sent: every ```graphql block and inline JSON query of
// the docs, the GraphiQL example, and every query, mutation and subscription the console sends
// (read from console/app's source: a constant interpolated into one, such as a page size, is read
// from the same file).
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { EXAMPLE_QUERY } from "../../src/server/graphql/yoga.ts";

export function documentedDocuments(): string[] {
  const docs = ["docs/graphql.md", "docs/nests.md", "docs/nests-chat.md", "README.md"].map((file) =>
    readFileSync(file, "utf8"),
  );
  const blocks = docs.flatMap((text) => [...text.matchAll(/```graphql\n([\s\S]*?)```/g)].map((m) => m[1]!));
  const inline = docs.flatMap((text) =>
    [...text.matchAll(/"query":\s*"((?:subscription|query|mutation|\{)[^"]*)"/g)].map((m) => m[1]!),
  );
  return [...blocks, ...inline, EXAMPLE_QUERY];
}

export interface ConsoleDocument {
  file: string;
  name: string;
  source: string;
}

export function consoleDocuments(dir = "console/app"): ConsoleDocument[] {
  const found: ConsoleDocument[] = [];
  for (const file of readdirSync(dir).filter((f) => /\.tsx?$/.test(f))) {
    const text = readFileSync(path.join(dir, file), "utf8");
    const constant = (name: string): string => {
      const m = new RegExp(`const ${name} = (?:"([^"]*)"|\`([^\`]*)\`|(\\d+));`).exec(text);
      if (!m) throw new Error(`${file}: cannot read the constant ${name}`);
      return m[1] ?? m[2] ?? m[3]!;
    };
    for (const m of text.matchAll(
      /const (\w+) = (?:`((?:query|mutation|subscription)\b[^`]*)`|"((?:query|mutation|subscription)\b[^"]*)");/g,
    )) {
      const source = (m[2] ?? m[3]!).replace(/\$\{(\w+)\}/g, (_, name: string) => constant(name));
      found.push({ file, name: m[1]!, source });
    }
  }
  return found;
}
