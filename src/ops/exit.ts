// The exit codes every `crows` command keeps (docs/operations.md).
export const EXIT = { done: 0, failed: 1, usage: 2, cannotRun: 3 } as const;
