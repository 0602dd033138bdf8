// The prank cooldown (docs/rules.md, "Abuse"): 60 s on the first prank, doubling with each prank of
// that requester, capped at an hour; during it every post is refused with the seconds left and earns
// no strike; and it is stored, so a restart forgives nobody. The limiter runs on the server's own
// database with a clock the test moves (nobody waits an hour); the restart is a real one, and the
// last test pranks over HTTP on the real clock and restarts the server in the middle of the cooldown.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import {
  RateLimiter,
  BASE_COOLDOWN_S,
  MAX_COOLDOWN_S,
  MAX_PER_WINDOW,
  STRIKES_TO_PRANK,
} from "../../src/flock/rate-limit.ts";

const clock = { now: Date.parse("2026-06-01T08:00:00.000Z") };

/** Posts at the clock's moment until the limiter pranks; returns the cooldown and how many were admitted. */
async function prank(limiter: RateLimiter, name: string): Promise<{ cooldownS: number; admitted: number }> {
  let admitted = 0;
  for (let i = 0; i < (MAX_PER_WINDOW + STRIKES_TO_PRANK) * 2; i++) {
    const answer = await limiter.admit(name);
    if (!answer.admitted) {
      assert.ok(answer.pranked, `refused without a prank after ${admitted}`);
      return { cooldownS: answer.cooldownS, admitted };
    }
    admitted += 1;
  }
  throw new Error(`${name} was never pranked`);
}

test("each prank doubles the cooldown, 60 s up to an hour, and it carries across a restart", async () => {
  let server: TestServer = await startTestServer();
  try {
    for (const name of ["mallory", "Trent the Second", "eve"]) {
      let limiter = new RateLimiter(server.app.prisma, () => clock.now);
      const seen: number[] = [];
      for (let n = 0; n < 9; n++) {
        const { cooldownS, admitted } = await prank(limiter, name);
        assert.is(admitted, MAX_PER_WINDOW + STRIKES_TO_PRANK - 1, "the third strike pranks");
        seen.push(cooldownS);
        // Inside the cooldown: refused with the seconds left, no prank, no strike earned.
        clock.now += (cooldownS - 1) * 1000;
        for (let i = 0; i < MAX_PER_WINDOW + STRIKES_TO_PRANK; i++) {
          const during = await limiter.admit(name);
          assert.equal(
            during.admitted ? "admitted" : [during.cooldownS, during.pranked],
            [1, false],
            `prank ${n + 1}, one second left`,
          );
        }
        if (n === 4) {
          // A restart in the middle: the stored state rules the new process's limiter.
          server = await server.restart();
          limiter = new RateLimiter(server.app.prisma, () => clock.now);
          const after = await limiter.admit(name);
          assert.equal(after.admitted ? "admitted" : after.cooldownS, 1, "still cooling down after the restart");
        }
        clock.now += 1000; // the cooldown is over
      }
      const expected = Array.from({ length: 9 }, (_, n) => Math.min(BASE_COOLDOWN_S * 2 ** n, MAX_COOLDOWN_S));
      assert.equal(seen, expected);
      assert.equal(seen.slice(0, 7), [60, 120, 240, 480, 960, 1920, 3600]);
      // Once over, the requester is admitted again (its window starts empty).
      assert.ok((await limiter.admit(name)).admitted);
    }
  } finally {
    await server.close();
  }
});

test("over HTTP: a pranked requester is still refused after a restart, with the seconds left", async () => {
  let server = await startTestServer();
  try {
    let refusal: { status: number; body: any } | undefined;
    for (let i = 0; i < (MAX_PER_WINDOW + STRIKES_TO_PRANK) * 2 && !refusal; i++) {
      const response = await server.post("/api/lists", { text: `errand ${i}`, requester: "restart-dodger" });
      if (response.status === 429) refusal = response;
    }
    assert.ok(refusal, "pranked");
    assert.is(refusal.body.cooldown_s, BASE_COOLDOWN_S);
    server = await server.restart();
    const again = await server.post("/api/lists", { text: "after the restart", requester: "restart-dodger" });
    assert.is(again.status, 429, "a restart forgives nobody");
    assert.ok(
      again.body.cooldown_s > 0 && again.body.cooldown_s <= BASE_COOLDOWN_S,
      `cooldown_s ${again.body.cooldown_s}`,
    );
    assert.is(again.headers.get("retry-after"), String(again.body.cooldown_s));
  } finally {
    await server.close();
  }
});

test.run();
