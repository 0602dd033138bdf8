// An optional Idempotency-Key on every POST under /api (docs/operations.md "Idempotency keys"): the
// first answer (anything but a 5xx or a 429) is returned again, with `Idempotent-Replayed: true`,
// to a retry with the same key, method, path and body for 24 h; the same key with another body is
// a 422. Retries with one key run one at a time in an instance; a list records its answer in the
// transaction that stores it (compat/lists.ts), so a commit whose answer was lost still has one.
import type { App } from "../src/app.ts";
import { KeyedLock } from "../src/base/util/keyed-lock.ts";
import { describeError } from "../src/base/describe-error.ts";
import { HttpError } from "../src/http/http-error.ts";
import { idempotencyClaim, IdempotencyStore } from "../src/storage/idempotency.ts";
import type { CompatRequest, CompatResponse } from "./router.ts";

const KEY = /^[\x21-\x7e]{1,255}$/;
const stores = new WeakMap<App, IdempotencyStore>();
const locks = new KeyedLock();

export async function idempotent(
  app: App,
  request: CompatRequest,
  run: (request: CompatRequest) => Promise<CompatResponse>,
): Promise<CompatResponse> {
  const clientKey = request.headers["idempotency-key"];
  if (request.method !== "POST" || clientKey === undefined) return run(request);
  if (!KEY.test(clientKey)) throw new HttpError(400, "Idempotency-Key must be 1 to 255 visible ASCII characters.");
  const body = await request.json();
  const claim = idempotencyClaim(request.method, request.path, clientKey, body);
  let store = stores.get(app);
  if (!store) stores.set(app, (store = new IdempotencyStore(app.prisma)));
  const kept = store;
  return locks.run(claim.key, async () => {
    const earlier = await kept.find(claim);
    if (earlier) {
      if (!earlier.sameRequest)
        throw new HttpError(
          422,
          "This Idempotency-Key was used for a different request; send a new key with a new request.",
        );
      return { status: earlier.status, json: earlier.body, headers: { "idempotent-replayed": "true" } };
    }
    const response = await run({
      ...request,
      json: async () => body,
      idempotency: { recordIn: (tx, answer) => kept.recordIn(tx, claim, answer) },
    });
    if ("stream" in response || "page" in response || response.status >= 500 || response.status === 429)
      return response;
    // The work is done: failing to keep its answer must not turn it into an error the client retries.
    await kept
      .record(claim, { status: response.status, body: response.json ?? null })
      .catch((error: unknown) => app.logLine(`compat: could not keep an idempotent answer: ${describeError(error)}`));
    return response;
  });
}
