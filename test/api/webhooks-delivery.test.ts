// Webhook deliveries end to end: a real server, a real receiver on loopback that verifies every
// signature with the standardwebhooks package. A whole list's events in log order; retries after
// 500s and a refused connection with one webhook-id; Retry-After; 410 Gone; a receiver that hangs.
import { test } from "uvu";
import * as assert from "uvu/assert";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { startTestServer, type TestServer } from "../helpers/server.ts";
import { readUntil, startReceiver, type Receiver } from "../helpers/webhook-receiver.ts";
import { ownerFollows } from "../helpers/owner.ts";

const ENV = {
  CROWS_WEBHOOK_ALLOW_PRIVATE: "1",
  CROWS_WEBHOOK_RETRY_SCHEDULE: "0,0.2,0.2,0.2",
  CROWS_WEBHOOK_POLL_S: "0.05",
  CROWS_WEBHOOK_TIMEOUT_S: "1",
  CROWS_APPROVAL_WINDOW_MS: "60000",
};

async function withServer(run: (server: TestServer) => Promise<void>, env: Record<string, string> = {}) {
  const server = await startTestServer({ env: { ...ENV, ...env } });
  try {
    await run(server);
  } finally {
    await server.close();
  }
}

async function addEndpoint(server: TestServer, receiver: Receiver, events?: string[]) {
  const added = await server.app.webhooks.endpoints.add({ url: receiver.url, ...(events ? { events } : {}) });
  receiver.secrets.push(added.secret);
  return added;
}

/** A port nothing listens on (opened, then closed). */
async function refusedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

test("a whole list: every event type it causes, each verified, in log order, with decide links on approval.requested", async () => {
  const receiver = await startReceiver();
  try {
    await withServer(async (server) => {
      await addEndpoint(server, receiver);
      const { body } = await server.post("/api/lists", {
        text: "Buy milk\nWrite a haiku about crows\nPlan a picnic",
        requester: "hooks",
      });
      const listId = body.list_id as string;
      const owner = await ownerFollows(server.url, listId, {
        decide: (target, m) => !(target === "triage" && m.data.item_id === `${listId}-3`),
      });
      const events = await owner.finished;
      owner.sse.close();
      await receiver.waitFor((r) => r.some((d) => d.body.type === "list.finished"), 20_000, "list.finished");
      assert.equal(receiver.unverified, []);
      // What the log says should have gone out, in log order.
      const expected = events
        .filter(
          (m) =>
            ((m.event === "item.triaged" || m.event === "item.answered") && m.data.needs_approval) ||
            (m.event === "verdict" && m.data.verdict !== "auto") ||
            ["list.finished", "item.skipped", "trust.changed"].includes(m.event),
        )
        .map((m) =>
          m.event === "verdict"
            ? "approval.decided"
            : m.event.startsWith("item.") && m.event !== "item.skipped"
              ? "approval.requested"
              : m.event,
        );
      const got = receiver.received.map((d) => d.body.type);
      assert.equal(got, expected);
      assert.ok(got.includes("approval.requested") && got.includes("approval.decided") && got.includes("item.skipped"));
      // webhook-ids: one per event, derived from the log's event id, ascending in log order.
      const eventIds = receiver.received.map((d) => Number(/^msg_(\d+)_ep_[A-Za-z0-9_-]+$/.exec(d.id)?.[1]));
      assert.ok(
        eventIds.every((id) => Number.isInteger(id) && id > 0),
        receiver.received.map((d) => d.id).join(),
      );
      assert.equal(
        eventIds,
        [...eventIds].sort((a, b) => a - b),
      );
      assert.is(new Set(receiver.received.map((d) => d.id)).size, receiver.received.length);
      const asked = receiver.received.find((d) => d.body.type === "approval.requested")!.body;
      assert.is(asked.data.list, listId);
      assert.is(asked.data.target, "triage");
      assert.is(asked.data.text, "Buy milk");
      assert.ok(asked.data.proposal.mode && asked.data.proposal.task_type);
      assert.ok(Date.parse(asked.data.deadline) > Date.now());
      assert.match(asked.data.approve_url, new RegExp(`^${server.url}/decide/`));
      assert.match(asked.data.reject_url, new RegExp(`^${server.url}/decide/`));
      assert.ok(Date.parse(asked.timestamp) > 0);
      const decided = receiver.received.find((d) => d.body.type === "approval.decided")!.body;
      assert.ok(["approved", "rejected", "timeout"].includes(decided.data.verdict));
      // Each delivery is recorded as delivered with its one attempt (recorded just after the answer).
      const endpointId = receiver.received[0]!.id.split("_").slice(2).join("_");
      const page = await readUntil(
        () => server.app.webhooks.endpoints.deliveries(endpointId, undefined, 100),
        (p) => p.deliveries.every((d) => d.state === "delivered"),
      );
      assert.is(page.deliveries.length, receiver.received.length);
      assert.ok(page.deliveries.every((d) => d.attempts.length === 1 && d.attempts[0]!.status === 204));
    });
  } finally {
    await receiver.close();
  }
});

test("an events filter: only the types asked for", async () => {
  const receiver = await startReceiver();
  try {
    await withServer(async (server) => {
      await addEndpoint(server, receiver, ["list.finished"]);
      const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "hooks" });
      const owner = await ownerFollows(server.url, body.list_id);
      await owner.finished;
      owner.sse.close();
      await receiver.waitFor((r) => r.length >= 1);
      await server.app.flock.settled(body.list_id);
      assert.equal(
        receiver.received.map((d) => d.body.type),
        ["list.finished"],
      );
      assert.is(receiver.received[0]!.body.data.list_id, body.list_id);
    });
  } finally {
    await receiver.close();
  }
});

test("500s and a refused connection are retried with the same webhook-id; then it is delivered", async () => {
  const receiver = await startReceiver();
  try {
    await withServer(
      async (server) => {
        receiver.answer = ({ n }) => ({ status: n < 2 ? 500 : 204 });
        await addEndpoint(server, receiver, ["list.finished"]);
        const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "hooks" });
        const owner = await ownerFollows(server.url, body.list_id);
        await owner.finished;
        owner.sse.close();
        await receiver.waitFor((r) => r.length >= 3);
        assert.is(new Set(receiver.received.map((d) => d.id)).size, 1);
        assert.equal(receiver.unverified, []);

        // A receiver that is not there at all: refused connections, then it comes up on that port.
        const port = await refusedPort();
        const added = await server.app.webhooks.endpoints.add({
          url: `http://127.0.0.1:${port}/late`,
          events: ["list.finished"],
        });
        const second = await server.post("/api/lists", { text: "Write a haiku", requester: "hooks" });
        const owner2 = await ownerFollows(server.url, second.body.list_id);
        await owner2.finished;
        owner2.sse.close();
        const page = await readUntil(
          () => server.app.webhooks.endpoints.deliveries(added.id, undefined, 10),
          (p) => (p.deliveries[0]?.attempts.length ?? 0) >= 2,
        );
        const attempts = page.deliveries[0]!.attempts;
        assert.ok(attempts.length >= 2, JSON.stringify(page));
        assert.ok(
          attempts.every((a) => a.status === null && /ECONNREFUSED/.test(a.error ?? "")),
          JSON.stringify(attempts),
        );
        assert.ok(attempts.every((a) => !(a.error ?? "").includes(added.secret.slice(6))));
        const late = http.createServer((req, res) => {
          let raw = "";
          req
            .on("data", (c) => (raw += c))
            .on("end", () => {
              seen.push(String(req.headers["webhook-id"]));
              res.writeHead(200).end();
            });
        });
        const seen: string[] = [];
        await new Promise<void>((r) => late.listen(port, "127.0.0.1", r));
        try {
          await readUntil(
            async () => seen.length,
            (n) => n > 0,
          );
          assert.equal(seen, [page.deliveries[0]!.id]);
        } finally {
          late.closeAllConnections();
          await new Promise<void>((r) => late.close(() => r()));
        }
      },
      {
        CROWS_WEBHOOK_RETRY_SCHEDULE:
          "0,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1,0.1",
      },
    );
  } finally {
    await receiver.close();
  }
});

test("Retry-After is honoured over the schedule; 410 Gone disables the endpoint with a reason", async () => {
  const receiver = await startReceiver();
  try {
    await withServer(async (server) => {
      receiver.answer = ({ n }) =>
        n === 0 ? { status: 503, headers: { "retry-after": "1" } } : n === 1 ? { status: 410 } : {};
      const added = await addEndpoint(server, receiver);
      const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "hooks" });
      await receiver.waitFor((r) => r.length >= 2);
      const [first, second] = receiver.received;
      assert.is(first!.id, second!.id);
      assert.ok(second!.at - first!.at >= 950, `waited ${second!.at - first!.at} ms, not the 1 s asked`);
      const view = await readUntil(
        async () => (await server.app.webhooks.endpoints.list()).find((e) => e.id === added.id)!,
        (v) => v.disabled,
        5_000,
      );
      assert.ok(view.disabled);
      assert.match(view.disabled_reason!, /410 Gone/);
      // Nothing more is sent to it: the rest of the list's events stay where they are.
      const owner = await ownerFollows(server.url, body.list_id);
      await owner.finished;
      owner.sse.close();
      await new Promise((r) => setTimeout(r, 300));
      assert.is(receiver.received.length, 2);
    });
  } finally {
    await receiver.close();
  }
});

test("an endpoint that keeps failing past CROWS_WEBHOOK_DISABLE_AFTER_S is disabled with a reason; a success in time clears it", async () => {
  const failing = await startReceiver();
  const recovering = await startReceiver();
  try {
    failing.answer = () => ({ status: 503 });
    recovering.answer = ({ n }) => ({ status: n < 2 ? 500 : 204 });
    await withServer(
      async (server) => {
        const bad = await addEndpoint(server, failing, ["list.finished"]);
        const good = await addEndpoint(server, recovering, ["list.finished"]);
        const { body } = await server.post("/api/lists", { text: "Buy milk", requester: "hooks" });
        const owner = await ownerFollows(server.url, body.list_id);
        await owner.finished;
        owner.sse.close();
        const view = await readUntil(
          async () => (await server.app.webhooks.endpoints.list()).find((e) => e.id === bad.id)!,
          (v) => v.disabled,
        );
        assert.ok(view.disabled);
        assert.match(
          view.disabled_reason!,
          /^Failing since .* with no success \(last: HTTP 503\); disabled after 1 s\.$/,
        );
        const page = await server.app.webhooks.endpoints.deliveries(bad.id, undefined, 10);
        assert.ok(page.deliveries[0]!.attempts.length >= 2);
        assert.ok(page.deliveries[0]!.attempts.every((a) => a.status === 503 && a.error === "HTTP 503"));
        await recovering.waitFor(() => recovering.acked.length === 1);
        const fine = await readUntil(
          async () => (await server.app.webhooks.endpoints.list()).find((e) => e.id === good.id)!,
          (v) => v.failing_since === null,
        );
        assert.equal([fine.disabled, fine.failing_since], [false, null]);
      },
      {
        CROWS_WEBHOOK_DISABLE_AFTER_S: "1",
        CROWS_WEBHOOK_RETRY_SCHEDULE: Array.from({ length: 60 }, () => "0.1").join(","),
      },
    );
  } finally {
    await failing.close();
    await recovering.close();
  }
});

test("a receiver that hangs holds only its own delivery: the flock and another endpoint go on", async () => {
  const hanging = await startReceiver();
  const healthy = await startReceiver();
  try {
    hanging.answer = () => ({ hang: true });
    await withServer(async (server) => {
      await addEndpoint(server, hanging, ["list.finished"]);
      await addEndpoint(server, healthy, ["list.finished"]);
      const started = Date.now();
      const lists: string[] = [];
      for (const text of ["Buy milk", "Write a haiku", "Plan a picnic"])
        lists.push((await server.post("/api/lists", { text, requester: "hooks" })).body.list_id);
      for (const id of lists) {
        const owner = await ownerFollows(server.url, id);
        await owner.finished;
        owner.sse.close();
      }
      await healthy.waitFor((r) => r.length === 3);
      assert.ok(Date.now() - started < 10_000);
      await hanging.waitFor((r) => r.length >= 3);
      // Each hanging send is given up after the timeout and recorded as such.
      const id = hanging.received[0]!.id.split("_").slice(2).join("_");
      const page = await readUntil(
        () => server.app.webhooks.endpoints.deliveries(id, undefined, 10),
        (p) => p.deliveries.every((d) => d.attempts.length >= 1),
      );
      assert.ok(
        page.deliveries.every((d) => /no answer within 1 s/.test(d.attempts[0]?.error ?? "")),
        JSON.stringify(page.deliveries.map((d) => d.attempts)),
      );
    });
  } finally {
    await hanging.close();
    await healthy.close();
  }
});

test.run();
