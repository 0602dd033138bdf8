// The settings of a flight with tools (docs/tools.md "A flight with tools"), as the tool loop reads
// them: declared with the flock's settings (src/base/settings/flock.ts), gathered here.
import type { Config } from "./settings/index.ts";

export interface ToolFlightConfig {
  /** Model calls one flight with tools may make; the last one is offered no tools. */
  steps: number;
  /** One tool call's timeout. */
  callTimeoutMs: number;
  /** A tool's output is cut to this many bytes (UTF-8) before the model sees it. */
  outputBytes: number;
  /** A call whose arguments (JSON) are larger is refused before it is asked or run. */
  argsBytes: number;
}

export const toolFlightConfig = (config: Config): ToolFlightConfig => ({
  steps: config.toolSteps,
  callTimeoutMs: config.toolTimeoutMs,
  outputBytes: config.toolOutputBytes,
  argsBytes: config.toolArgsBytes,
});
