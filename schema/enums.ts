// Every closed set the schema answers with, as a GraphQL enum whose value names are the stored
// wire values themselves (lowercase, as REST and the events carry them), so an enum changes a
// field's type for codegen clients and nothing of what a client receives. Sets that include ""
// (a message's mode, mode_tagged_by and resolved) cannot be enums without changing the wire, and
// stay String (CHANGELOG.md). Each list comes from where the engine defines it, where it does.
import { builder } from "./builder.ts";
import { TASK_TYPES } from "../src/base/roster.ts";
import { KINDS } from "../src/nests/message.ts";
import { LEVEL_NAMES } from "../src/flock/trust.ts";

export const ListStatus = builder.enumType("ListStatus", {
  description: "running until every item is done or skipped, then finished.",
  values: ["running", "finished"] as const,
});

export const ItemStage = builder.enumType("ItemStage", {
  description: "Where an item stands: pending, triaging, awaiting_triage, working, awaiting_output, done or skipped.",
  values: ["pending", "triaging", "awaiting_triage", "working", "awaiting_output", "done", "skipped"] as const,
});

export const ItemMode = builder.enumType("ItemMode", {
  description: "How the Sentry's triage has an item worked: one crow, split into subtasks, or a murder of crows.",
  values: ["solo", "split", "murder"] as const,
});

export const TaskType = builder.enumType("TaskType", {
  description: "The task types triage assigns (the ledger's records also hold the Sentry's triage/watch, so TrustRecord.taskType stays a String).",
  values: TASK_TYPES,
});

export const SkipReason = builder.enumType("SkipReason", {
  description: "Why an item was dropped: its triage rejected or timed out, the budget was spent, or the work failed.",
  values: ["rejected", "timeout", "budget", "failure"] as const,
});

export const MessageKind = builder.enumType("MessageKind", {
  description: "A nest message's kind (EVENTS.md payload table).",
  values: KINDS,
});

export const TaggedBy = builder.enumType("TaggedBy", {
  description: "Who decided a message's kind: jev, the poster's header, a disagreement, the default, or the harness for its own kinds.",
  values: ["jev", "header", "disagreement", "default", "harness"] as const,
});

export const Verdict = builder.enumType("Verdict", {
  description: "A verdict as the ledger records it: approved, rejected, timeout (silence, counted as a rejection) or auto (trust skipped the owner).",
  values: ["approved", "rejected", "timeout", "auto"] as const,
});

export const LevelName = builder.enumType("LevelName", {
  description: "A trust level's name: 0 stranger, 1 regular, 2 trusted.",
  values: LEVEL_NAMES,
});

export const StartingTrust = builder.enumType("StartingTrust", {
  description: "Where a spun crow's ledger starts: stranger or regular (never trusted).",
  values: ["stranger", "regular"] as const,
});

export const QuarantineStatus = builder.enumType("QuarantineStatus", {
  description: "quarantined until the owner's exact reinstate, then reinstated.",
  values: ["quarantined", "reinstated"] as const,
});

export const QuestionType = builder.enumType("QuestionType", {
  description: "A classifier question's shape: a choice among labels, a noul (0..1) or a score.",
  values: ["choice", "noul", "score"] as const,
});

export const ClassifierBackend = builder.enumType("ClassifierBackend", {
  description: "Which classifier answered: the offline model or System One.",
  values: ["offline", "systemone"] as const,
});
