// What a call returned, as the flight sees it (docs/tools.md "Hostile tools"): the text content
// joined, anything else summarised in one line, and the whole cut to MAX_OUTPUT_BYTES (on a
// character boundary) while `bytes` keeps the size the server sent. It is data: nothing in it is
// ever read as an instruction (docs/security.md "Tool output is data").
import { MAX_OUTPUT_BYTES } from "./limits.ts";
import type { ToolCallOutcome } from "./types.ts";

interface ContentBlock {
  type?: unknown;
  text?: unknown;
  mimeType?: unknown;
  data?: unknown;
  uri?: unknown;
  resource?: unknown;
  name?: unknown;
}

/** The size base64 text decodes to, without decoding it. */
const base64Bytes = (data: string) =>
  Math.floor((data.length * 3) / 4) - (data.endsWith("==") ? 2 : data.endsWith("=") ? 1 : 0);

function summaryOf(block: ContentBlock): string {
  const mime = typeof block.mimeType === "string" ? ` ${block.mimeType}` : "";
  switch (block.type) {
    case "image":
    case "audio": {
      const size = typeof block.data === "string" ? `, ${base64Bytes(block.data)} bytes` : "";
      return `[${block.type}${mime}${size}]`;
    }
    case "resource_link":
      return `[resource link ${typeof block.uri === "string" ? block.uri : ""}]`;
    case "resource": {
      const resource = (block.resource ?? {}) as ContentBlock;
      if (typeof resource.text === "string") return resource.text;
      return `[resource ${typeof resource.uri === "string" ? resource.uri : ""}]`;
    }
    default:
      return `[${typeof block.type === "string" ? block.type.slice(0, 40) : "unknown"} content]`;
  }
}

/** The first `max` bytes of `text` as UTF-8, never splitting a character. */
export function cutToBytes(text: string, max: number): string {
  const buffer = Buffer.from(text, "utf8");
  if (buffer.length <= max) return text;
  let end = max;
  while (end > 0 && (buffer[end]! & 0xc0) === 0x80) end--; // back off a continuation byte
  return buffer.subarray(0, end).toString("utf8");
}

export function outcomeOf(result: {
  content?: unknown;
  isError?: unknown;
  structuredContent?: unknown;
}): ToolCallOutcome {
  const blocks = Array.isArray(result.content) ? (result.content as ContentBlock[]) : [];
  const parts = blocks.map((block) =>
    block?.type === "text" && typeof block.text === "string" ? block.text : summaryOf(block ?? {}),
  );
  if (parts.length === 0 && result.structuredContent !== undefined)
    parts.push(JSON.stringify(result.structuredContent));
  const whole = parts.join("\n");
  const bytes = Buffer.byteLength(whole, "utf8");
  return { ok: true, text: cutToBytes(whole, MAX_OUTPUT_BYTES), isError: result.isError === true, bytes };
}
