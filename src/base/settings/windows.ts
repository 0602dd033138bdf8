// CROWS_APPROVAL_WINDOWS (docs/rules.md "Windows"): an approval window of its own per task type or
// per nest, as a setting kind. The floor that spans two settings (a window may go under a minute
// only as far as a test's shorter CROWS_APPROVAL_WINDOW_MS) is checked in load.ts.
import { z } from "zod";
import type { Kind } from "./kinds.ts";

/** A window the owner set for one nest or one task type. */
export interface ApprovalWindows {
  byNest: Record<string, number>;
  byTaskType: Record<string, number>;
}

export const MIN_WINDOW_MS = 60_000;
export const MAX_WINDOW_MS = 24 * 3_600_000;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000 };
const PART = /^(nest|task):([a-z0-9/_-]+)=(\d+)(s|m|h)$/;
const SYNTAX = "takes nest:<id>=<time> or task:<type>=<time> (time: 90s, 30m, 2h)";

/** How a window is spelled back (docs, `crows config`, the floor's error line). */
const spell = (ms: number) =>
  ms % 3_600_000 === 0 ? `${ms / 3_600_000}h` : ms % 60_000 === 0 ? `${ms / 60_000}m` : `${ms / 1_000}s`;

/**
 * `nest:<nest_id>=<time>` and `task:<task_type>=<time>`, comma-separated, a time being a whole
 * number of s, m or h ("90s", "30m", "2h"), each above zero and at most a day.
 */
export const approvalWindows: Kind<ApprovalWindows> = {
  zod: z.string().transform((raw, ctx) => {
    const windows: ApprovalWindows = { byNest: {}, byTaskType: {} };
    for (const part of raw
      .split(",")
      .map((p) => p.trim())
      .filter(Boolean)) {
      const found = PART.exec(part);
      if (!found) {
        ctx.addIssue({ code: "custom", message: `${SYNTAX}, got "${part}"` });
        return z.NEVER;
      }
      const [, kind, key, amount, unit] = found;
      const ms = Number(amount) * UNIT_MS[unit!]!;
      if (ms < 1_000 || ms > MAX_WINDOW_MS) {
        ctx.addIssue({ code: "custom", message: `"${part}" must be from a minute to a day` });
        return z.NEVER;
      }
      (kind === "nest" ? windows.byNest : windows.byTaskType)[key!] = ms;
    }
    return windows;
  }),
  rule: SYNTAX,
  type: "list of windows",
  show: (w) =>
    [
      ...Object.entries(w.byNest).map(([k, ms]) => `nest:${k}=${spell(ms)}`),
      ...Object.entries(w.byTaskType).map(([k, ms]) => `task:${k}=${spell(ms)}`),
    ].join(","),
};

/** The first window under the floor (a minute, or the base window when a test set that shorter), spelled. */
export function windowUnderFloor(windows: ApprovalWindows, baseWindowMs: number): string | undefined {
  const floor = Math.min(MIN_WINDOW_MS, baseWindowMs);
  for (const [kind, table] of [
    ["nest", windows.byNest],
    ["task", windows.byTaskType],
  ] as const)
    for (const [key, ms] of Object.entries(table)) if (ms < floor) return `${kind}:${key}=${spell(ms)}`;
  return undefined;
}

/** The window of an approval: its task type's, else its nest's, else the base window. */
export function windowFor(windows: ApprovalWindows, baseWindowMs: number, nestId: string, taskType: string): number {
  return windows.byTaskType[taskType] ?? windows.byNest[nestId] ?? baseWindowMs;
}
