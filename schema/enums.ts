// Every closed set the schema answers with, as a GraphQL enum whose value names are the stored
// wire values themselves (lowercase, as REST and the events carry them), so an enum changes a
// field's type for codegen clients and nothing of what a client receives. Each set is the array the
// domain defines it by, never a list of its own here (test/graphql-enums.test.ts holds each enum to
// its array). Sets that include "" (a message's mode, mode_tagged_by and resolved) or words no enum
// value can spell ("triage/watch", "list.started", "cap reached") stay String (CHANGELOG.md).
import { builder } from "./builder.ts";
import { TASK_TYPES } from "../src/base/roster.ts";
import { TRIAGE_MODES } from "../src/base/triage.ts";
import { ERROR_CODES } from "../src/base/errors.ts";
import { SCOPES } from "../src/access/scopes.ts";
import { DELIVERY_STATES } from "../src/storage/webhooks/types.ts";
import { CLASSIFIER_BACKENDS, QUESTION_TYPES } from "../src/classifier/jev.ts";
import { SKIP_REASONS, VERDICTS } from "../src/flock/events.ts";
import { ITEM_STAGES, LIST_STATUSES } from "../src/flock/stages.ts";
import { LEVEL_NAMES } from "../src/flock/trust.ts";
import { BOARD_CHANGE_KINDS } from "../src/flock/flight-board.ts";
import { KINDS, TAGGED_BY } from "../src/nests/message.ts";
import { SPUN_TRUST } from "../src/nests/registry.ts";
import { QUARANTINE_STATUSES } from "../src/nests/membership.ts";

export const ListStatus = builder.enumType("ListStatus", {
  description: "running until every item is done or skipped, then finished.",
  values: LIST_STATUSES,
});

export const ItemStage = builder.enumType("ItemStage", {
  description: "Where an item stands: pending, awaiting_triage, working, awaiting_output, done or skipped.",
  values: ITEM_STAGES,
});

export const ItemMode = builder.enumType("ItemMode", {
  description: "How the Sentry's triage has an item worked: one crow, split into subtasks, or a murder of crows.",
  values: TRIAGE_MODES,
});

export const TaskType = builder.enumType("TaskType", {
  description:
    "The task types triage assigns (the ledger's records also hold the Sentry's triage/watch, so TrustRecord.taskType stays a String).",
  values: TASK_TYPES,
});

export const SkipReason = builder.enumType("SkipReason", {
  description: "Why an item was dropped: its triage rejected or timed out, the budget was spent, or the work failed.",
  values: SKIP_REASONS,
});

export const MessageKind = builder.enumType("MessageKind", {
  description: "A nest message's kind (docs/contract.md payload table).",
  values: KINDS,
});

export const TaggedBy = builder.enumType("TaggedBy", {
  description:
    "Who decided a message's kind: jev, the poster's header, a disagreement, the default, or the harness for its own kinds.",
  values: TAGGED_BY,
});

export const Verdict = builder.enumType("Verdict", {
  description:
    "A verdict as the ledger records it: approved, rejected, timeout (silence, counted as a rejection) or auto (trust skipped the owner).",
  values: VERDICTS,
});

export const LevelName = builder.enumType("LevelName", {
  description: "A trust level's name: 0 stranger, 1 regular, 2 trusted.",
  values: LEVEL_NAMES,
});

export const StartingTrust = builder.enumType("StartingTrust", {
  description: "Where a spun crow's ledger starts: stranger or regular (never trusted).",
  values: SPUN_TRUST,
});

export const QuarantineStatus = builder.enumType("QuarantineStatus", {
  description: "quarantined until the owner's exact reinstate, then reinstated.",
  values: QUARANTINE_STATUSES,
});

export const QuestionType = builder.enumType("QuestionType", {
  description: "A classifier question's shape: a choice among labels, a noul (0..1) or a score.",
  values: QUESTION_TYPES,
});

export const ClassifierBackend = builder.enumType("ClassifierBackend", {
  description: "Which classifier answered: the offline model or System One.",
  values: CLASSIFIER_BACKENDS,
});

export const FlightWaitChangeKind = builder.enumType("FlightWaitChangeKind", {
  description: "waiting: a flight began (or went on) waiting on its provider; resumed: its wait ended.",
  values: BOARD_CHANGE_KINDS,
});

export const ErrorCode = builder.enumType("ErrorCode", {
  description:
    "An expected refusal's stable code (REST: bad_input 400, not_found 404, conflict 409, forbidden 403, rate_limited 429).",
  values: ERROR_CODES,
});

export const Scope = builder.enumType("Scope", {
  description:
    "What a token may do: read (queries, streams, exports), decide (verdicts, owner replies), write (lists, nests, posts), admin (tokens, webhooks), metrics (GET /metrics only).",
  values: SCOPES,
});

export const WebhookDeliveryState = builder.enumType("WebhookDeliveryState", {
  description:
    "pending (due, or waiting for its next attempt), delivered, failed (the retries ran out), or dropped (nothing to send).",
  values: DELIVERY_STATES,
});
