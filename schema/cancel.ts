// cancelList: a running list cancelled (REST: POST /api/lists/{list_id}/cancel; docs/rules.md
// "Cancelling a list"). Needs write, declared on the field.
import { builder, principalOfContext } from "./builder.ts";
import { ConflictError, NotFoundError } from "../src/base/errors.ts";

builder.mutationFields((t) => ({
  cancelList: t.prismaField({
    authScopes: { write: true },
    type: "TodoList",
    description:
      "Cancels a running list: items waiting are skipped (rejected), flights in the air land cancelled, approvals waiting are rejected by the caller; list.finished then says cancelled. Asked again before it finishes, the same answer. NotFoundError for an unknown list; ConflictError once it has finished.",
    args: { listId: t.arg.id({ required: true }) },
    errors: { types: [NotFoundError, ConflictError], directResult: true },
    resolve: async (query, _root, args, ctx) => {
      const listId = String(args.listId);
      await ctx.app.flock.cancelList({ listId, actor: principalOfContext(ctx).actor });
      return ctx.app.prisma.todoList.findUniqueOrThrow({ ...query, where: { id: listId } });
    },
  }),
}));
