// The Batcher (src/base/util/batch.ts): calls made while a batch runs go together in the next one;
// each caller gets its own result or the batch's error; one batch runs at a time.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { Batcher } from "../../src/base/util/batch.ts";

test("calls of one turn run as one batch, each caller getting its own answer, for many sizes", async () => {
  for (const size of [1, 2, 3, 16, 100, 257]) {
    const batches: number[][] = [];
    const batcher = new Batcher<number, string>(async (inputs) => {
      batches.push(inputs);
      return inputs.map((n) => `#${n * 2}`);
    });
    const inputs = Array.from({ length: size }, (_, i) => i * 7 - 3);
    const answers = await Promise.all(inputs.map((n) => batcher.add(n)));
    assert.equal(
      answers,
      inputs.map((n) => `#${n * 2}`),
      `size ${size}`,
    );
    assert.equal(batches, [inputs], `size ${size}: one batch, in call order`);
  }
});

test("calls made while a batch runs wait for it and go together in the next", async () => {
  let running = 0;
  let most = 0;
  const batches: string[][] = [];
  let release!: () => void;
  const first = new Promise<void>((r) => (release = r));
  const batcher = new Batcher<string, number>(async (inputs) => {
    running++;
    most = Math.max(most, running);
    batches.push(inputs);
    if (batches.length === 1) await first;
    running--;
    return inputs.map((s) => s.length);
  });
  const a = batcher.add("a");
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r)); // the first batch is running now
  const later = ["bb", "ccc", "dddd"].map((s) => batcher.add(s));
  await new Promise((r) => setTimeout(r, 10));
  assert.is(batches.length, 1, "the next batch waits for the running one");
  release();
  assert.equal(await Promise.all([a, ...later]), [1, 2, 3, 4]);
  assert.equal(batches, [["a"], ["bb", "ccc", "dddd"]]);
  assert.is(most, 1, "never two batches at once");
});

test("a failed batch rejects each of its callers, and the next batch runs", async () => {
  let calls = 0;
  const batcher = new Batcher<number, number>(async (inputs) => {
    calls++;
    if (calls === 1) throw new Error("database busy");
    return inputs.map((n) => n + 1);
  });
  const failed = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
  assert.equal(
    failed.map((r) => r.status),
    ["rejected", "rejected", "rejected"],
  );
  assert.ok(failed.every((r) => r.status === "rejected" && (r.reason as Error).message === "database busy"));
  assert.equal(await Promise.all([10, 20].map((n) => batcher.add(n))), [11, 21]);
});

test.run();
