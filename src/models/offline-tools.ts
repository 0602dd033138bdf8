// The offline brain's tool rule (docs/tools.md "Without a key"): a small deterministic program, as
// the rest of the brain is. On a crow's first step of a flight with tools:
//   - "write <text> to <file>" (or "into") asks the write_file tool for that write;
//   - otherwise an item that names files (words with a text file's extension: notes.txt,
//     ./todo.md, data.csv; not .js, so "Node.js" names no file) reads each, the first
//     MAX_READS distinct ones in the order named, with read_text_file (else read_file), a
//     read-only tool: one call per file, all in that first step;
//   - anything else calls no tool.
// After its calls returned (or were refused), it answers in words, quoting what each call gave.
import type { ToolCallRequest, ToolOffer, ToolTurn } from "./model.ts";

// Text files by their extension; `js` is left out on purpose ("learn Node.js" names no file).
const EXT =
  "(?:txt|md|markdown|json|csv|tsv|ya?ml|toml|log|ini|cfg|conf|xml|html?|css|tsx?|jsx|mjs|py|rb|go|rs|java|c|h|cpp|sh|sql)";
const WRITE = new RegExp(`\\bwrite\\s+["'“]?(.+?)["'”]?\\s+(?:to|into)\\s+(\\S+\\.${EXT})\\b`, "i");
const FILE = new RegExp(
  `(?:^|[\\s"'(])((?:\\.{1,2}\\/)?[\\w][\\w\\-/]*\\.${EXT})(?=$|[\\s"'),;:!?]|\\.(?:\\s|$))`,
  "gi",
);
/** The most files one item reads (a bound, so a long item cannot fan out into many calls). */
export const MAX_READS = 3;

/** The calls the brain asks for on the first step, or none. */
export function offlineToolCalls(task: string, turn: ToolTurn): ToolCallRequest[] {
  if (turn.final || turn.steps.length > 0 || turn.offered.length === 0) return [];
  const write = WRITE.exec(task);
  if (write) {
    const tool = offered(turn, ["write_file"], false);
    if (tool) return [{ id: "offline-call-1", name: tool.name, args: { path: write[2]!, content: write[1]! } }];
  }
  const files = namedFiles(task);
  if (files.length === 0) return [];
  const tool = offered(turn, ["read_text_file", "read_file"], true);
  if (!tool) return [];
  return files.map((path, i) => ({ id: `offline-call-${i + 1}`, name: tool.name, args: { path } }));
}

/** The distinct files a task names, in order, at most MAX_READS. */
function namedFiles(task: string): string[] {
  const files: string[] = [];
  for (const match of task.matchAll(FILE)) {
    const file = match[1]!;
    if (!files.includes(file)) files.push(file);
    if (files.length === MAX_READS) break;
  }
  return files;
}

/** What the calls gave, one line each, for the answer that follows them. */
export function offlineToolSummary(turn: ToolTurn): string {
  const lines: string[] = [];
  for (const step of turn.steps) {
    for (const call of step.calls) {
      const path = typeof call.args.path === "string" ? ` ${call.args.path}` : "";
      lines.push(`${call.name}${path}: ${clip(call.result, 300)}`);
    }
  }
  return lines.join("\n");
}

function offered(turn: ToolTurn, names: string[], readOnly: boolean): ToolOffer | undefined {
  for (const name of names) {
    const tool = turn.offered.find((t) => t.tool === name && (!readOnly || t.readOnly));
    if (tool) return tool;
  }
  return undefined;
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
