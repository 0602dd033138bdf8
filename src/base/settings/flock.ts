// The flock's own settings (docs/flock.md §11, docs/rules.md): how long the owner has to answer,
// the budget of a list, how many crows and items at once, and how long the harness waits on them.
import { setting } from "./declare.ts";
import { ms, whole } from "./kinds.ts";
import { approvalWindows, type ApprovalWindows } from "./windows.ts";

export const FLOCK = {
  approvalWindowMs: setting<number>({
    env: "CROWS_APPROVAL_WINDOW_MS",
    group: "flock",
    kind: ms(1),
    audience: "owner",
    default: 600_000,
    describe: "approval and ask_owner window; unanswered = rejected",
  }),
  approvalWindows: setting<ApprovalWindows>({
    env: "CROWS_APPROVAL_WINDOWS",
    group: "flock",
    kind: approvalWindows,
    audience: "owner",
    default: { byNest: {}, byTaskType: {} },
    defaultText: "none",
    describe:
      "windows of their own, comma-separated: `task:<task_type>=<time>` and `nest:<nest_id>=<time>` (time: 90s, 30m, 2h), each from a minute to a day; the task type's first, then the nest's, then CROWS_APPROVAL_WINDOW_MS (docs/rules.md \"Windows\")",
  }),
  approvalReminderMs: setting<number>({
    env: "CROWS_APPROVAL_REMINDER_MS",
    group: "flock",
    kind: ms(0, 86_400_000),
    audience: "owner",
    default: 120_000,
    describe:
      'a reminder (the `approval.reminder` webhook and a console notice) this long before an approval\'s deadline, for a window longer than that; 0: none (docs/rules.md "Reminders")',
  }),
  reworkTries: setting<number>({
    env: "CROWS_REWORK_TRIES",
    group: "flock",
    kind: whole(0, 10),
    audience: "tuning",
    default: 2,
    describe:
      'how many times one item may be sent back for another try, triage and output together (docs/rules.md "Rework")',
  }),
  tokenBudget: setting<number>({
    env: "CROWS_TOKEN_BUDGET",
    group: "flock",
    kind: whole(1),
    audience: "tuning",
    default: 20_000,
    describe: "model tokens per list",
  }),
  murderSize: setting<number>({
    env: "CROWS_MURDER_SIZE",
    group: "flock",
    kind: whole(2, 8),
    audience: "tuning",
    default: 3,
    describe: "crows on a murder item, and a conspiracy's default `invited`",
  }),
  maxSpun: setting<number>({
    env: "CROWS_MAX_SPUN",
    group: "flock",
    kind: whole(0, 1000),
    audience: "tuning",
    default: 8,
    describe: "MaxSpunCrows: registry size",
  }),
  itemConcurrency: setting<number>({
    env: "CROWS_ITEM_CONCURRENCY",
    group: "flock",
    kind: whole(1, 50),
    audience: "tuning",
    default: 4,
    describe: "items of one list worked at once",
  }),
  banterWaitMs: setting<number>({
    env: "CROWS_BANTER_WAIT_MS",
    group: "flock",
    kind: ms(0),
    audience: "tuning",
    default: 20_000,
    describe: "how long list.finished waits for banter in flight",
  }),
  nudgeAfterMs: setting<number>({
    env: "CROWS_NUDGE_AFTER_MS",
    group: "flock",
    kind: ms(10),
    audience: "tuning",
    default: 120_000,
    describe:
      'a claimed nest request with no deliver this long after its claim is a missed expectation: the harness nudges the crow once, and if it still has not answered this long after the nudge it declines (docs/nests-chat.md "Obligations"). Twice the model timeout\'s default, so a healthy slow call answers or declines on its own first',
  }),
  toolSteps: setting<number>({
    env: "CROWS_TOOL_STEPS",
    group: "flock",
    kind: whole(1, 100),
    audience: "tuning",
    default: 8,
    describe:
      'model calls one flight with tools may make; the last is offered no tools (docs/tools.md "A flight with tools")',
  }),
  toolTimeoutMs: setting<number>({
    env: "CROWS_TOOL_TIMEOUT_MS",
    group: "flock",
    kind: ms(10, 3_600_000),
    audience: "tuning",
    default: 60_000,
    describe: "one tool call's timeout",
  }),
  toolOutputBytes: setting<number>({
    env: "CROWS_TOOL_OUTPUT_BYTES",
    group: "flock",
    kind: whole(256, 1_048_576, "bytes"),
    audience: "tuning",
    default: 16_384,
    describe: "a tool's output is cut to this many bytes (UTF-8) before the model sees it",
  }),
  toolArgsBytes: setting<number>({
    env: "CROWS_TOOL_ARGS_BYTES",
    group: "flock",
    kind: whole(256, 1_048_576, "bytes"),
    audience: "tuning",
    default: 65_536,
    describe: "a tool call whose arguments (JSON) are larger is refused before it is asked or run",
  }),
};
