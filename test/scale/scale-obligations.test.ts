// Obligations on two instances sharing one PostgreSQL and one Redis: orphaned obligations (their
// instance gone, lease lapsed) are taken over by exactly one instance each and answered once; and
// answers racing from both instances for one open obligation store exactly one (the conditional
// close under PostgreSQL's concurrent writers); and asks expire once each, whichever instance
// holds them, a stopped instance's too.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startTestServer } from "../helpers/server.ts";
import { eventually, freshDatabase, serviceTests } from "../helpers/scale-services.ts";
import { pacedCrows } from "../helpers/models.ts";
import { ConflictError } from "../../src/base/errors.ts";
import { ASK_EXPIRED_EVENT, Obligations } from "../../src/nests/obligations/index.ts";
import { watchStream } from "../../src/base/streams.ts";
import { startReceiver } from "../helpers/webhook-receiver.ts";

const { svc, it } = serviceTests("scale-obligations");

async function pair(env: Record<string, string>, models: Parameters<typeof pacedCrows>[0][]) {
  const db = await freshDatabase(svc!.pgUrl);
  const shared = { DATABASE_URL: db.url, REDIS_URL: svc!.redisUrl, ...env };
  const lines: string[][] = [[], []];
  const a = await startTestServer({
    env: shared,
    deps: { model: pacedCrows(models[0]!), logLine: (l) => lines[0]!.push(l) },
  });
  const b = await startTestServer({
    env: shared,
    deps: { model: pacedCrows(models[1]!), logLine: (l) => lines[1]!.push(l) },
  });
  const done = async () => {
    await Promise.allSettled([a.close(), b.close()]);
    await db.drop();
  };
  return { a, b, lines, done };
}

it("orphaned obligations: each is taken over by exactly one instance and answered exactly once", async () => {
  // Both instances' crows answer in 50 ms: whichever instance takes an obligation over answers it.
  // The lease is long enough that a loaded machine's stalled event loop does not let a held one
  // lapse (a legitimate second takeover): the orphans' leases have lapsed already, so it costs nothing.
  const { a, b, lines, done } = await pair({ CROWS_LEASE_MS: "2000" }, [
    () => ({ delayMs: 50 }),
    () => ({ delayMs: 50 }),
  ]);
  try {
    await a.post("/api/nests", { name: "Ops", crows: ["Inky", "Rook", "Pepper", "Sable"] });
    const crows = ["Inky", "Rook", "Pepper", "Sable"];
    const requests: string[] = [];
    const prisma = a.app.prisma;
    // Four claimed requests whose instance is gone: stored as a dead instance would have left them.
    for (const [i, crow] of crows.entries()) {
      const posted = await a.post("/api/nests/ops/messages", {
        author: "owner",
        kind: "request",
        text: `Errand ${i}: tidy the ${["shed", "attic", "garage", "porch"][i]}`,
        to: crow,
      });
      requests.push(posted.body.msg_id);
    }
    await a.app.chat.idle();
    // Reopen them as claimed, owned by an instance that no longer exists, lease lapsed; drop the answers.
    await prisma.message.deleteMany({ where: { nestId: "ops", kind: { in: ["deliver", "decline"] } } });
    await prisma.obligation.updateMany({
      where: { requestId: { in: requests }, respondent: { not: "Sentry" } },
      data: {
        stage: "claimed",
        answerId: "",
        closedAt: null,
        ownerId: "gone",
        leaseUntil: new Date(Date.now() - 1000),
        claimedAt: new Date(),
      },
    });
    for (const requestId of requests) {
      await eventually(
        `${requestId} answered`,
        async () => {
          const row = await prisma.obligation.findUnique({ where: { id: requestId } });
          return row && row.stage !== "claimed" ? row : undefined;
        },
        15_000,
      );
    }
    // The quiet: every lease the rows carry has lapsed, then two more lease sweeps finished on both
    // instances (the second begun after the lapse), then the work they may have started. A second
    // takeover, nudge or answer, by a sweep or through a lapsed lease, would be stored by then.
    const leaseEnds = Math.max(
      ...(await prisma.obligation.findMany({ where: { requestId: { in: requests } } })).map(
        (r) => r.leaseUntil?.getTime() ?? 0,
      ),
    );
    await eventually("the rows' leases to lapse", async () => (Date.now() > leaseEnds ? true : undefined), 15_000);
    const sweptSince = [a, b].map((s) => s.app.chat.obligationSweepsDone());
    await eventually(
      "two more sweeps on both instances",
      async () => ([a, b].every((s, i) => s.app.chat.obligationSweepsDone() >= sweptSince[i]! + 2) ? true : undefined),
      15_000,
    );
    await Promise.all([a.app.chat.idle(), b.app.chat.idle()]);
    const all = await a.app.chat.list("ops");
    for (const requestId of requests) {
      const takers = lines.filter((l) => l.some((line) => line.includes(`resuming obligation ${requestId} (`)));
      assert.is(takers.length, 1, `${requestId} was taken over by ${takers.length} instances`);
      assert.is(all.filter((m) => m.kind === "nudge" && m.refers_to === requestId).length, 1, "one nudge");
      const answers = all.filter((m) => m.refers_to === requestId && (m.kind === "deliver" || m.kind === "decline"));
      assert.is(answers.length, 1, `${requestId}: ${answers.length} answers`);
    }
    const owners = await prisma.obligation.findMany({
      where: { requestId: { in: requests } },
      select: { ownerId: true },
    });
    assert.ok(
      owners.every((o) => o.ownerId === a.app.flock.instanceId || o.ownerId === b.app.flock.instanceId),
      "no obligation is left with the dead instance",
    );
  } finally {
    await done();
  }
});

it("answers racing from both instances for one open obligation: exactly one is stored", async () => {
  const { a, b, done } = await pair({}, [() => ({ never: true }), () => ({ never: true })]);
  try {
    const crows = ["Inky", "Rook", "Pepper"];
    await a.post("/api/nests", { name: "Ops", crows });
    const gates = [a, b].map(
      (s) =>
        new Obligations(s.app.chat, {
          config: s.app.config,
          prisma: s.app.prisma,
          log: s.app.log,
          nests: s.app.nests,
          instanceId: "racer",
          logLine: () => {},
        }),
    );
    for (const [round, crow] of crows.entries()) {
      const posted = await a.post("/api/nests/ops/messages", {
        author: "owner",
        kind: "request",
        text: `Errand ${round}`,
        to: crow,
      });
      const requestId = posted.body.msg_id as string;
      await eventually("the claim", async () =>
        (await a.app.prisma.obligation.findUnique({ where: { id: requestId } }))?.stage === "claimed"
          ? true
          : undefined,
      );
      const racers = [a, b, a, b].map((server, i) =>
        server.app.chat.post(
          "ops",
          { author: crow, kind: "deliver", text: `Answer ${i} from ${i % 2 ? "B" : "A"}`, refers_to: requestId },
          { response: true, unmetered: true, within: gates[i % 2]!.close(requestId, crow, "answered") },
        ),
      );
      const settled = await Promise.allSettled(racers);
      assert.is(settled.filter((s) => s.status === "fulfilled").length, 1, `round ${round}`);
      for (const s of settled) if (s.status === "rejected") assert.instance(s.reason, ConflictError, String(s.reason));
      const answers = (await b.app.chat.list("ops")).filter((m) => m.refers_to === requestId && m.kind === "deliver");
      assert.is(answers.length, 1);
    }
  } finally {
    await done();
  }
});

it("asks on two instances each expire once, one left by a stopped instance too, and reach the receiver once", async () => {
  const env = {
    CROWS_LEASE_MS: "2000",
    CROWS_APPROVAL_WINDOW_MS: "3000",
    CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
    CROWS_WEBHOOK_POLL_S: "0.05",
  };
  const { a, b, lines, done } = await pair(env, [() => ({ delayMs: 50 }), () => ({ delayMs: 50 })]);
  const receiver = await startReceiver();
  try {
    const added = await a.post("/api/webhooks", { url: receiver.url });
    receiver.secrets.push(added.body.secret);
    const ask = async (server: typeof a, author: string, phrase: string) => {
      const posted = await server.post("/api/nests/todo/messages", {
        author,
        text: `Shall I ${phrase}?`,
        kind: "ask_owner",
        approval_phrase: phrase,
      });
      assert.is(posted.status, 201, posted.text);
      return posted.body.msg_id as string;
    };
    const expiries = async (askId: string) =>
      (await b.app.log.read(watchStream("todo"), 0, 100_000)).filter(
        (e) => e.name === ASK_EXPIRED_EVENT && JSON.parse(e.payload).ask_id === askId,
      ).length;
    const resolved = (askId: string) => [
      ...new Map(
        receiver.received
          .filter((d) => d.body.type === "ask.resolved" && d.body.data.ask_id === askId)
          .map((d) => [d.id, d.body.data.verdict]),
      ).values(),
    ];
    const openAsks = () =>
      b.app.prisma.obligation.count({
        where: { id: { startsWith: "ask:" }, stage: { in: ["awaiting_claim", "claimed"] } },
      });

    // Both instances up: an ask held by each, and one held by B answered through A.
    const onA = await ask(a, "Quill", "book the venue");
    const onB = await ask(b, "Sentry", "order the cake");
    const answered = await ask(b, "Quill", "send the newsletter");
    assert.is(
      (
        await a.post("/api/nests/todo/messages", {
          author: "owner",
          kind: "say",
          text: "Send the newsletter",
          refers_to: answered,
        })
      ).status,
      201,
    );
    await receiver.waitFor(() => [onA, onB].every((id) => resolved(id).length > 0), 30_000, "the two expiries");
    // Then one left on A, which stops before its deadline: B takes it over once A's lease lapses.
    const left = await ask(a, "Sentry", "renew the domain");
    await a.close();
    await receiver.waitFor(() => resolved(left).length > 0, 30_000, "the left ask's expiry");
    assert.ok(
      lines[1]!.some((line) => line.includes(`resuming obligation ask:${left} (`)),
      "B took the left ask over",
    );
    await eventually("every ask closed", async () => ((await openAsks()) === 0 ? true : undefined), 20_000);
    await eventually(
      "every delivery sent",
      async () =>
        (await b.app.prisma.webhookOutbox.count()) +
          (await b.app.prisma.webhookDelivery.count({ where: { state: "pending" } })) ===
        0
          ? true
          : undefined,
      20_000,
    );
    // Two more sweeps on B after the last close: a second takeover would have shown by now.
    const swept = b.app.chat.obligationSweepsDone();
    await eventually(
      "two more sweeps on B",
      async () => (b.app.chat.obligationSweepsDone() >= swept + 2 ? true : undefined),
      20_000,
    );
    for (const id of [onA, onB, left]) {
      assert.is(await expiries(id), 1, `${id}: one ask.expired`);
      assert.equal(resolved(id), ["timeout"], `${id}: one ask.resolved, timeout`);
    }
    assert.is(await expiries(answered), 0);
    assert.equal(resolved(answered), ["approved"]);
    assert.equal(receiver.unverified, []);
  } finally {
    await receiver.close();
    await done();
  }
});

test.run();
