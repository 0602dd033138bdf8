// Compares the built GraphQL schema with a base copy of schema/schema.graphql and fails on a
// breaking change CHANGELOG.md does not name (docs/graphql.md "The schema as a contract").
// The base: $CROWS_SCHEMA_BASE (a git ref) when set; else where this branch left main (the merge
// base with main, or origin/main), so a branch is judged on its own changes and not on what main
// gained since; on main itself (the merge base is HEAD) its first parent, the main before the
// merge; else HEAD~1; else the committed copy (a tree without git history, where only "built ==
// committed" can be checked). Exit 1 on an unnamed break.
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { printedSchema, SCHEMA_FILE } from "../schema/print.ts";
import { schemaBreaks } from "../schema/breaking.ts";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const PATH = "schema/schema.graphql";

function git(...args: string[]): string | null {
  try {
    return execFileSync("git", args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  } catch {
    return null;
  }
}

const commitOf = (ref: string): string | null =>
  git("rev-parse", "--verify", "--quiet", `${ref}^{commit}`)?.trim() || null;

/** The ref whose committed schema is the contract, and its SDL. */
export function baseSchema(): { ref: string; sdl: string } {
  const head = commitOf("HEAD");
  const refs: Array<[label: string, commit: string | null]> = [];
  if (process.env.CROWS_SCHEMA_BASE)
    refs.push([process.env.CROWS_SCHEMA_BASE, commitOf(process.env.CROWS_SCHEMA_BASE)]);
  else {
    for (const main of ["main", "origin/main"]) {
      const base = git("merge-base", "HEAD", main)?.trim() || null;
      if (base === null) continue;
      refs.push(
        base === head ? [`${main}~1 (HEAD is main)`, commitOf("HEAD~1")] : [`the merge base with ${main}`, base],
      );
      break;
    }
    refs.push(["HEAD~1", commitOf("HEAD~1")]);
  }
  for (const [label, commit] of refs) {
    const sdl = commit ? git("show", `${commit}:${PATH}`) : null;
    if (sdl !== null) return { ref: `${label} (${commit!.slice(0, 9)})`, sdl };
  }
  return { ref: "the committed copy", sdl: readFileSync(SCHEMA_FILE, "utf8") };
}

export function checkSchema(): { ref: string; breaks: ReturnType<typeof schemaBreaks> } {
  const base = baseSchema();
  const changelog = readFileSync(new URL("../CHANGELOG.md", import.meta.url), "utf8");
  return { ref: base.ref, breaks: schemaBreaks(base.sdl, printedSchema(), changelog) };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { ref, breaks } = checkSchema();
  const unnamed = breaks.filter((b) => !b.named);
  for (const b of breaks) console.log(`${b.named ? "named  " : "UNNAMED"} ${b.type}: ${b.description}`);
  console.log(`${breaks.length} breaking change(s) against ${ref}, ${unnamed.length} not named in CHANGELOG.md`);
  process.exitCode = unnamed.length === 0 ? 0 : 1;
}
