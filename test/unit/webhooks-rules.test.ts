// The webhook rules in-process, each over many inputs: which log events fan out as which type,
// what data each type carries (the actor passes through), signatures as the standardwebhooks
// package checks them (one secret, two during a rotation), the retry schedule and Retry-After,
// and which targets are refused.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createHmac } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { dataOf, SOURCE_EVENT_NAMES, webhookTypeOf, type DataContext } from "../../src/webhooks/event-types.ts";
import { newSecret, signatureHeader } from "../../src/webhooks/signature.ts";
import { nextAttemptAt, retryAfterSeconds } from "../../src/webhooks/retry.ts";
import { checkTarget, classify } from "../../src/webhooks/targets.ts";
import { readLink, signLink } from "../../src/webhooks/links.ts";
import { BadInputError } from "../../src/base/errors.ts";
import { loadConfig, ConfigError } from "../../src/base/config.ts";

const p = (o: object) => JSON.stringify(o);

test("which log events fan out, and as what", () => {
  const cases: Array<[string, object, string | null]> = [
    ["item.triaged", { list_id: "l", item_id: "l-1", mode: "solo", needs_approval: true }, "approval.requested"],
    ["item.triaged", { list_id: "l", item_id: "l-1", mode: "solo", needs_approval: false }, null],
    [
      "item.answered",
      { list_id: "l", item_id: "l-1", answer: "x", crows: [], needs_approval: true },
      "approval.requested",
    ],
    ["item.answered", { list_id: "l", item_id: "l-1", answer: "x", crows: [], needs_approval: false }, null],
    ["verdict", { item_id: "l-1", target: "triage", verdict: "approved" }, "approval.decided"],
    ["verdict", { item_id: "l-1", target: "output", verdict: "rejected" }, "approval.decided"],
    ["verdict", { item_id: "l-1", target: "output", verdict: "timeout" }, "approval.decided"],
    ["verdict", { item_id: "l-1", target: "triage", verdict: "auto" }, null],
    ["list.finished", { tokens_used: 1, token_budget: 2 }, "list.finished"],
    ["item.skipped", { item_id: "l-1", reason: "budget" }, "item.skipped"],
    ["trust.changed", { holder: "flock", task_type: "x", from: 0, to: 1 }, "trust.changed"],
    ["approval.reminder", { item_id: "l-1", target: "triage", round: 0 }, "approval.reminder"],
    [
      "nest.message",
      {
        nest_id: "todo",
        msg_id: "todo-1",
        kind: "ask_owner",
        author: "Quill",
        approval_phrase: "yes do it",
        refers_to: "",
      },
      "ask.opened",
    ],
    [
      "nest.message",
      { nest_id: "todo", msg_id: "todo-2", kind: "flag", author: "Sentry", refers_to: "todo-1" },
      "crow.flagged",
    ],
    [
      "nest.message",
      { nest_id: "todo", msg_id: "todo-3", kind: "say", author: "owner", refers_to: "todo-1" },
      "ask.resolved",
    ],
    ["nest.message", { nest_id: "todo", msg_id: "todo-3", kind: "say", author: "owner", refers_to: "" }, null],
    ["nest.message", { nest_id: "todo", msg_id: "todo-3", kind: "say", author: "Pepper", refers_to: "todo-1" }, null],
    ["nest.message", { nest_id: "todo", msg_id: "todo-4", kind: "request", author: "owner", refers_to: "" }, null],
    ["crow.flying", { item_id: "l-1", crow: "Pepper" }, null],
    ["crow.landed", { item_id: "l-1", crow: "Pepper", ok: true }, null],
    ["list.started", { items: [], requester: "r" }, null],
    ["crow.banter", { item_id: "l-1", text: "needs_approval" }, null],
    ["watch", { verdict: "auto" }, null],
    [
      "ask.expired",
      { nest_id: "todo", ask_id: "todo-1", approval_phrase: "go", verdict: "timeout", resolved: "rejected" },
      "ask.resolved",
    ],
    [
      "ask.expired",
      {
        nest_id: "ops",
        ask_id: "ops-9",
        author: "Sentry",
        approval_phrase: "reinstate Inky",
        verdict: "timeout",
        resolved: "rejected",
        actor: { kind: "system" },
      },
      "ask.resolved",
    ],
  ];
  for (const [name, payload, type] of cases) assert.is(webhookTypeOf(name, p(payload)), type, `${name} ${p(payload)}`);
  // recover reads back only these names: every event that fans out must be among them.
  for (const [name, , type] of cases)
    if (type) assert.ok(SOURCE_EVENT_NAMES.includes(name), `${name} is a source event`);
  assert.is(webhookTypeOf("nest.message", "not json"), null);
});

const context = (over: Partial<DataContext> = {}): DataContext => ({
  approval: async () => ({ text: "Buy milk", deadline: new Date("2030-01-01T00:00:00Z"), pending: true }),
  askResolvedBy: async () => null,
  askDeadline: (ts) => new Date(Date.parse(ts) + 600_000),
  links: (subject) => ({
    approve_url: `https://x/${subject.kind}/approve`,
    reject_url: `https://x/${subject.kind}/reject`,
  }),
  ...over,
});

test("data is the event's own payload plus what the type adds; an actor on the source event passes through", async () => {
  const actors = [
    { kind: "link", webhook_id: "ep_1" },
    { kind: "token", token_id: "t1", token_name: "ci" },
    { kind: "owner" },
    { kind: "system" },
  ];
  for (const actor of actors) {
    for (const verdict of ["approved", "rejected", "timeout"]) {
      const payload = {
        list_id: "l",
        item_id: "l-2",
        target: "output",
        verdict,
        ts: "2030-01-01T00:00:00.000Z",
        actor,
      };
      const data = await dataOf("approval.decided", p(payload), context());
      assert.equal(data, payload);
    }
  }
  const withoutActor = await dataOf(
    "approval.decided",
    p({ list_id: "l", item_id: "l-2", target: "triage", verdict: "timeout" }),
    context(),
  );
  assert.is("actor" in withoutActor!, false);

  const triage = await dataOf(
    "approval.requested",
    p({
      list_id: "l",
      item_id: "l-1",
      mode: "split",
      task_type: "shopping",
      subtasks: ["a"],
      reason: "r",
      needs_approval: true,
    }),
    context(),
  );
  assert.equal(
    [
      triage!.list,
      triage!.item,
      triage!.text,
      triage!.target,
      triage!.proposal,
      triage!.deadline,
      triage!.approve_url,
      triage!.reject_url,
    ],
    [
      "l",
      "l-1",
      "Buy milk",
      "triage",
      { mode: "split", task_type: "shopping", subtasks: ["a"], reason: "r" },
      "2030-01-01T00:00:00.000Z",
      "https://x/approval/approve",
      "https://x/approval/reject",
    ],
  );
  const output = await dataOf(
    "approval.requested",
    p({ list_id: "l", item_id: "l-1", answer: "done", crows: ["Pepper"], needs_approval: true }),
    context(),
  );
  assert.equal([output!.target, output!.proposal], ["output", { answer: "done", crows: ["Pepper"] }]);

  const ask = await dataOf(
    "ask.opened",
    p({ nest_id: "todo", msg_id: "todo-1", kind: "ask_owner", approval_phrase: "go", ts: "2030-01-01T00:00:00.000Z" }),
    context(),
  );
  assert.equal(
    [ask!.approval_phrase, ask!.deadline, ask!.approve_url],
    ["go", "2030-01-01T00:10:00.000Z", "https://x/ask/approve"],
  );
  assert.is(await dataOf("ask.resolved", p({ msg_id: "todo-3", refers_to: "todo-1" }), context()), null);
  const resolved = await dataOf(
    "ask.resolved",
    p({ msg_id: "todo-3", refers_to: "todo-1", text: "go" }),
    context({ askResolvedBy: async () => ({ phrase: "go" }) }),
  );
  assert.equal(
    [resolved!.ask_id, resolved!.approval_phrase, resolved!.resolved, resolved!.verdict],
    ["todo-1", "go", "approved", "approved"],
  );
  assert.equal(
    [resolved!.msg_id, resolved!.refers_to, resolved!.text],
    ["todo-3", "todo-1", "go"],
    "the reply's own record stays as it was",
  );
  // An expiry is the data as logged (no lookup: nothing replied), with verdict timeout.
  for (const [ask, phrase] of [
    ["todo-1", "go"],
    ["ops-12", "reinstate Inky"],
    ["x-3", "Ship It"],
  ] as const) {
    const expired = {
      nest_id: ask.split("-")[0],
      ask_id: ask,
      author: "Quill",
      to: "owner",
      refers_to: "",
      approval_phrase: phrase,
      deadline: "2030-01-01T00:10:00.000Z",
      verdict: "timeout",
      resolved: "rejected",
      ts: "2030-01-01T00:10:00.001Z",
      actor: { kind: "system" },
    };
    assert.equal(
      await dataOf("ask.resolved", p(expired), context({ askResolvedBy: async () => ({ phrase: "not looked up" }) })),
      expired,
    );
  }
  for (const type of ["list.finished", "item.skipped", "trust.changed", "crow.flagged"]) {
    const payload = { list_id: "l", anything: [1, 2], ts: "2030-01-01T00:00:00.000Z" };
    assert.equal(await dataOf(type, p(payload), context()), payload);
  }
});

test("a reminder carries the item and the decide links while its round waits, and is dropped once decided", async () => {
  const deadline = "2030-01-01T00:00:00.000Z";
  const payload = {
    list_id: "l",
    item_id: "l-2",
    target: "output",
    round: 1,
    deadline,
    ts: "2029-12-31T23:58:00.000Z",
  };
  assert.equal(await dataOf("approval.reminder", p(payload), context()), {
    ...payload,
    item: "l-2",
    text: "Buy milk",
    list: "l",
    approve_url: "https://x/approval/approve",
    reject_url: "https://x/approval/reject",
  });
  const decided = context({
    approval: async () => ({ text: "Buy milk", deadline: new Date(deadline), pending: false }),
  });
  assert.is(await dataOf("approval.reminder", p(payload), decided), null, "decided between the event and the send");
  const reopened = context({
    approval: async () => ({ text: "Buy milk", deadline: new Date("2030-01-01T00:10:00Z"), pending: true }),
  });
  assert.is(await dataOf("approval.reminder", p(payload), reopened), null, "another round waits now");
});

test("signatures verify with the standardwebhooks package and with plain node:crypto; two during a rotation", () => {
  for (let i = 0; i < 20; i++) {
    const secret = newSecret();
    assert.match(secret, /^whsec_[A-Za-z0-9+/]+=*$/);
    const id = `msg_${i}_ep_x${i}`;
    const ts = Math.floor(Date.now() / 1000) - i;
    const body = JSON.stringify({
      type: "list.finished",
      timestamp: new Date().toISOString(),
      data: { i, text: 'ünïcode ✓ \n"quoted"' },
    });
    const header = signatureHeader([secret], id, ts, body);
    new Webhook(secret).verify(body, {
      "webhook-id": id,
      "webhook-timestamp": String(ts),
      "webhook-signature": header,
    });
    const expected = createHmac("sha256", Buffer.from(secret.slice(6), "base64"))
      .update(`${id}.${ts}.${body}`)
      .digest("base64");
    assert.is(header, `v1,${expected}`);
    const next = newSecret();
    const both = signatureHeader([next, secret], id, ts, body);
    assert.is(both.split(" ").length, 2);
    for (const s of [next, secret])
      new Webhook(s).verify(body, { "webhook-id": id, "webhook-timestamp": String(ts), "webhook-signature": both });
    assert.throws(() =>
      new Webhook(newSecret()).verify(body, {
        "webhook-id": id,
        "webhook-timestamp": String(ts),
        "webhook-signature": both,
      }),
    );
    assert.throws(() =>
      new Webhook(secret).verify(body + " ", {
        "webhook-id": id,
        "webhook-timestamp": String(ts),
        "webhook-signature": header,
      }),
    );
  }
});

test("the retry schedule, its jitter, Retry-After, and the end of the schedule", () => {
  const schedule = [0, 5, 300, 1800];
  const now = 1_000_000;
  for (let attempts = 0; attempts < schedule.length; attempts++) {
    for (const random of [0, 0.5, 0.999]) {
      const at = nextAttemptAt(schedule, attempts, now, undefined, random)!.getTime();
      const planned = schedule[attempts]! * 1000;
      assert.ok(at >= now + planned && at <= now + planned * 1.1, `${attempts} ${random}`);
    }
  }
  assert.is(nextAttemptAt(schedule, 4, now, undefined), null);
  assert.is(nextAttemptAt(schedule, 4, now, 10), null);
  assert.is(nextAttemptAt(schedule, 1, now, 42)!.getTime(), now + 42_000);
  assert.is(retryAfterSeconds("120", now), 120);
  assert.is(retryAfterSeconds(" 7 ", now), 7);
  assert.is(retryAfterSeconds("999999999", now), 86_400);
  assert.is(retryAfterSeconds(new Date(now + 30_000).toUTCString(), now), 30);
  assert.is(retryAfterSeconds(new Date(now - 30_000).toUTCString(), now), 0);
  for (const bad of [undefined, "", "soon", "-5", "1.5x"])
    assert.is(retryAfterSeconds(bad, now), undefined, String(bad));
  assert.equal(loadConfig({ CROWS_WEBHOOK_RETRY_SCHEDULE: "0, 1,2.5" }).webhooks.retryScheduleS, [0, 1, 2.5]);
  assert.equal(loadConfig({}).webhooks.retryScheduleS, [0, 5, 300, 1800, 7200, 18000, 36000]);
  for (const bad of ["a", "1,,2", "-1", "1;2"])
    assert.throws(
      () => loadConfig({ CROWS_WEBHOOK_RETRY_SCHEDULE: bad }),
      (e: unknown) => e instanceof ConfigError && /CROWS_WEBHOOK_RETRY_SCHEDULE/.test((e as Error).message),
    );
});

test("targets: link-local and unspecified never; loopback and private only when allowed; https off loopback", () => {
  const never = [
    "http://169.254.169.254/latest",
    "https://169.254.1.1/",
    "http://[fe80::1]/",
    "https://[fe80::abcd]/",
    "http://0.0.0.0:8080/",
    "http://[::]/",
    "https://[::ffff:169.254.169.254]/",
  ];
  const privateOnes = [
    "http://127.0.0.1:9/h",
    "http://127.8.9.10/",
    "http://localhost:3000/",
    "http://[::1]/",
    "http://10.0.0.5/",
    "http://172.16.0.1/",
    "http://172.31.255.255/",
    "http://192.168.1.20/",
    "https://100.64.0.1/",
    "http://[fd00::1]/",
    "http://[::ffff:10.1.2.3]/",
  ];
  const publicHttps = [
    "https://example.com/hook",
    "https://hooks.example.org:8443/a?b=c",
    "https://8.8.8.8/",
    "https://172.32.0.1/",
    "https://[2001:db8::1]/",
  ];
  const publicHttp = ["http://example.com/hook", "http://8.8.8.8/", "http://172.32.0.1/"];
  const junk = [
    undefined,
    "",
    "  ",
    42,
    "not a url",
    "ftp://example.com/",
    "file:///etc/passwd",
    "javascript:alert(1)",
    `https://example.com/${"a".repeat(2100)}`,
  ];
  for (const allow of [false, true]) {
    for (const url of never)
      assert.throws(
        () => checkTarget(url, allow),
        (e: unknown) => e instanceof BadInputError && /never/.test((e as Error).message),
        url,
      );
    for (const url of privateOnes) {
      if (allow) checkTarget(url, allow);
      else
        assert.throws(
          () => checkTarget(url, allow),
          (e: unknown) => e instanceof BadInputError && /CROWS_WEBHOOK_ALLOW_PRIVATE=1/.test((e as Error).message),
          url,
        );
    }
    for (const url of publicHttps) checkTarget(url, allow);
    for (const url of publicHttp)
      assert.throws(
        () => checkTarget(url, allow),
        (e: unknown) => e instanceof BadInputError && /https/.test((e as Error).message),
        url,
      );
    for (const url of junk)
      assert.throws(
        () => checkTarget(url, allow),
        (e: unknown) => e instanceof BadInputError,
        String(url).slice(0, 40),
      );
  }
  assert.equal(
    [
      "1.1.1.1",
      "127.0.0.1",
      "10.1.1.1",
      "169.254.0.1",
      "0.0.0.0",
      "::1",
      "fe80::1",
      "fc00::1",
      "::",
      "2606:4700::1",
    ].map(classify),
    [
      "public",
      "loopback",
      "private",
      "link-local",
      "unspecified",
      "loopback",
      "link-local",
      "private",
      "unspecified",
      "public",
    ],
  );
});

test("decide links: what they claim is read back only from an untouched link signed by the same key", () => {
  const key = Buffer.alloc(32, 7);
  const other = Buffer.alloc(32, 8);
  const subjects = [
    { kind: "approval" as const, itemId: "abc-1", target: "triage" },
    { kind: "approval" as const, itemId: "list-with-dashes-12", target: "output" },
    { kind: "ask" as const, nestId: "launch-copy", msgId: "launch-copy-7" },
  ];
  for (const subject of subjects) {
    for (const action of ["approve", "reject"] as const) {
      const claims = { subject, action, webhookId: "ep_AbC-_9", expiresMs: 1_900_000_000_000 };
      const link = signLink(key, claims);
      assert.equal(readLink(key, link), claims);
      assert.is(readLink(other, link), undefined);
      const [body, mac] = link.slice("/decide/".length).split(".") as [string, string];
      const flipped = mac[0] === "A" ? `B${mac.slice(1)}` : `A${mac.slice(1)}`;
      assert.is(readLink(key, `/decide/${body}.${flipped}`), undefined);
      const forged = Buffer.from(
        JSON.stringify({
          ...JSON.parse(Buffer.from(body, "base64url").toString()),
          a: action === "approve" ? "reject" : "approve",
        }),
      ).toString("base64url");
      assert.is(readLink(key, `/decide/${forged}.${mac}`), undefined);
      assert.is(readLink(key, link.slice(0, -1)), undefined);
      assert.is(readLink(key, `${link}x`), undefined);
    }
  }
});

test.run();
