// Every root field declares the scopes that may run it (schema/scopes.ts), and the declaration
// guards the schema on its own: executed without the server's pre-check, a field refuses a
// principal without its scope with the same coded refusal the server answers.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { execute, parse, type GraphQLObjectType } from "graphql";
import { schema } from "../../schema/index.ts";
import { declaredScopes } from "../../schema/scopes.ts";
import type { Principal } from "../../src/access/principal.ts";
import { OWNER } from "../../src/base/actor.ts";

const roots = [schema.getQueryType(), schema.getMutationType(), schema.getSubscriptionType()] as GraphQLObjectType[];

test("every root field declares its scopes", () => {
  const undeclared = roots.flatMap((root) =>
    Object.values(root.getFields())
      .filter((field) => declaredScopes(field) === undefined)
      .map((field) => `${root.name}.${field.name}`),
  );
  assert.equal(undeclared, []);
});

test("the admin lists and every mutation but the posting ones need more than read", () => {
  const query = schema.getQueryType()!.getFields();
  assert.equal(declaredScopes(query.tokens!), ["admin"]);
  assert.equal(declaredScopes(query.lists!), ["read"]);
  const mutation = schema.getMutationType()!.getFields();
  assert.equal(declaredScopes(mutation.postMessage!), ["write", "decide"]);
  assert.equal(declaredScopes(mutation.postVerdict!), ["decide"]);
  assert.equal(declaredScopes(mutation.createToken!), ["admin"]);
});

test("the schema on its own refuses a field to a principal without its scope", async () => {
  const reader: Principal = { actor: OWNER, scopes: ["read"] };
  const result = await execute({
    schema,
    document: parse("{ tokens { id } }"),
    contextValue: { app: {} as never, principal: reader },
  });
  assert.equal(result.errors?.length, 1);
  assert.equal(result.errors![0]!.message, 'This token lacks the "admin" scope needed here.');
  assert.equal(result.errors![0]!.extensions.code, "forbidden");
  assert.equal(result.errors![0]!.extensions.scope, "admin");
});

test.run();
