// A tool's policy (docs/tools.md "Policies"): the owner's choice when they made one, else the
// default its MCP annotations give: readOnlyHint true is allow, anything else (unannotated
// included) is ask. Annotations are the server's word, so they only ever pick a default; a server
// cannot make a tool it calls read-only safer than "ask" by saying nothing.
import type { ToolAnnotations, ToolPolicy } from "./types.ts";
import { TOOL_POLICIES } from "./types.ts";

export const defaultPolicy = (annotations: ToolAnnotations): ToolPolicy =>
  annotations.readOnlyHint === true ? "allow" : "ask";

export const effectivePolicy = (annotations: ToolAnnotations, override: ToolPolicy | undefined): ToolPolicy =>
  override ?? defaultPolicy(annotations);

export const isToolPolicy = (value: unknown): value is ToolPolicy =>
  typeof value === "string" && (TOOL_POLICIES as readonly string[]).includes(value);

/** Only the annotation fields MCP defines, of the types it defines: nothing else a server sends. */
export function annotationsOf(raw: unknown): ToolAnnotations {
  if (!raw || typeof raw !== "object") return {};
  const source = raw as Record<string, unknown>;
  const out: ToolAnnotations = {};
  if (typeof source.title === "string") out.title = source.title.slice(0, 200);
  for (const hint of ["readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"] as const)
    if (typeof source[hint] === "boolean") out[hint] = source[hint];
  return out;
}
