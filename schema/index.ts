// The GraphQL schema: one import per domain file, then the build. Keep this a plain list.
import { builder } from "./builder.ts";
import "./errors.ts";
import "./personas.ts";
import "./lists.ts";
import "./cancel.ts";
import "./verdicts.ts";
import "./approvals.ts";
import "./reminders.ts";
import "./events.ts";
import "./trust.ts";
import "./nests.ts";
import "./crows.ts";
import "./classifier.ts";
import "./messages.ts";
import "./tokens.ts";
import "./audit.ts";
import "./flights.ts";
import "./webhooks.ts";
import "./tools.ts";
import "./tool-calls.ts";
import "./tool-call-changes.ts";

export const schema = builder.toSchema();
