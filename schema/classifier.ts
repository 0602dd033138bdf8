// Classifier answers (docs/flock.md §7 and §10): every Jev answer is stored with its
// probabilities so calibration can be measured; this exposes them read-only, newest first.
import { builder } from "./builder.ts";
import { ClassifierBackend, QuestionType } from "./enums.ts";
import { pageLimit } from "../src/base/util/clamp.ts";

builder.prismaObject("ClassifierAnswer", {
  description: "One answer Jev (System One or the offline model) gave to one question about one subject.",
  fields: (t) => ({
    id: t.exposeInt("id"),
    questionId: t.exposeString("questionId", {
      description: "Stable question id: kind, mode, answers_request, task_type, ...",
    }),
    questionType: t.field({
      type: QuestionType,
      select: { questionType: true },
      resolve: (a) => a.questionType as typeof QuestionType.$inferType,
    }),
    subject: t.exposeString("subject", { description: "What the question was about: a msg_id, an item_id." }),
    stateDigest: t.exposeString("stateDigest", { description: "sha256 of the state text that was asked about." }),
    answer: t.exposeString("answer", { description: "The choice, or the noul/score as text; empty when unsure." }),
    unsure: t.boolean({ select: { answer: true }, resolve: (row) => row.answer === "" }),
    probabilities: t.field({
      type: "JSON",
      description: "Label probabilities as stored (for an unsure answer: its reason).",
      select: { probabilities: true },
      resolve: (row) => {
        try {
          return JSON.parse(row.probabilities) as unknown;
        } catch {
          return {};
        }
      },
    }),
    backend: t.field({
      type: ClassifierBackend,
      select: { backend: true },
      resolve: (a) => a.backend as typeof ClassifierBackend.$inferType,
    }),
    model: t.exposeString("model", { description: "The pinned System One model, or the offline model's version." }),
    latencyMs: t.exposeInt("latencyMs"),
    truth: t.exposeString("truth", {
      description: "A known label (a crow's header, an owner's correction), or empty.",
    }),
    createdAt: t.expose("createdAt", { type: "DateTime" }),
  }),
});

builder.queryFields((t) => ({
  classifierAnswers: t.prismaField({
    authScopes: { read: true },
    type: ["ClassifierAnswer"],
    description:
      "Stored classifier answers, newest first; filter by question id and/or subject. limit defaults to 50, at most 500.",
    args: { questionId: t.arg.string(), subject: t.arg.string(), limit: t.arg.int() },
    resolve: (query, _root, args, ctx) =>
      ctx.app.prisma.classifierAnswer.findMany({
        ...query,
        where: {
          ...(args.questionId != null ? { questionId: args.questionId } : {}),
          ...(args.subject != null ? { subject: args.subject } : {}),
        },
        orderBy: { id: "desc" },
        take: pageLimit(args.limit, 50, 500),
      }),
  }),
}));
