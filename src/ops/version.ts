// The version crows reports (server.json, `crows up`, /healthz readers): package.json's.
import { readFileSync } from "node:fs";

let cached: string | undefined;

export function crowsVersion(): string {
  if (cached === undefined) {
    try {
      cached = String(
        (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version?: unknown })
          .version ?? "unknown",
      );
    } catch {
      cached = "unknown";
    }
  }
  return cached;
}
