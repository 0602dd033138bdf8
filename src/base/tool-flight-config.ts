// The settings of a flight with tools (docs/tools.md "A flight with tools"), read with the rest of
// the configuration: how many model calls one flight may make, how long one tool call may take,
// how much of a tool's output the model sees, how large a call's arguments may be. Config errors
// are made by config.ts (handed in), which imports this file.

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

type Env = Record<string, string | undefined>;
type Fail = (message: string) => Error;

export function loadToolFlightConfig(env: Env, fail: Fail): ToolFlightConfig {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === "") return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max)
      throw fail(`${name} must be a whole number from ${min} to ${max}, got ${JSON.stringify(raw)}`);
    return value;
  };
  return {
    steps: int("CROWS_TOOL_STEPS", 8, 1, 100),
    callTimeoutMs: int("CROWS_TOOL_TIMEOUT_MS", 60_000, 10, 3_600_000),
    outputBytes: int("CROWS_TOOL_OUTPUT_BYTES", 16_384, 256, 1_048_576),
    argsBytes: int("CROWS_TOOL_ARGS_BYTES", 65_536, 256, 1_048_576),
  };
}
