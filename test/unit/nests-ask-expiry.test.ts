// An ask's expiry and its exact reply (src/nests/obligations/ask-expiry.ts): each closes the ask's
// obligation with a conditional update in its own transaction, so whichever commits first decides
// and the other changes nothing. Two instances that both believe the deadline passed (a takeover
// racing a stalled holder) append one ask.expired between them, never two.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { withKit, type Kit } from "../helpers/nest-kit.ts";
import { Obligations, ASK_EXPIRED_EVENT } from "../../src/nests/obligations/index.ts";
import { watchStream } from "../../src/base/streams.ts";

const WINDOW_MS = 60_000;

/** An instance whose clock reads past every ask's window: to it, each open ask has expired. */
function lateInstance(kit: Kit, name: string): Obligations {
  const app = kit.server.app;
  return new Obligations(app.chat, {
    config: app.config,
    prisma: app.prisma,
    log: app.log,
    nests: app.nests,
    instanceId: name,
    logLine: () => {},
    now: () => Date.now() + 2 * WINDOW_MS,
  });
}

const expiriesOf = async (kit: Kit, askId: string) =>
  (await kit.server.app.log.read(watchStream("todo"), 0, 100_000)).filter(
    (e) => e.name === ASK_EXPIRED_EVENT && JSON.parse(e.payload).ask_id === askId,
  ).length;

const askRow = (kit: Kit, askId: string) =>
  kit.server.app.prisma.obligation.findUniqueOrThrow({ where: { id: `ask:${askId}` } });
const approvedAt = async (kit: Kit, askId: string) =>
  (await kit.server.app.prisma.message.findUniqueOrThrow({ where: { id: askId } })).approvedAt;

async function ask(kit: Kit, phrase: string): Promise<string> {
  const posted = await kit.post("todo", {
    author: "Quill",
    text: `Shall I go ahead: ${phrase}?`,
    kind: "ask_owner",
    approval_phrase: phrase,
  });
  assert.is(posted.status, 201);
  return posted.body.msg_id;
}

const exactReply = (kit: Kit, askId: string, phrase: string) =>
  kit.post("todo", { author: "owner", kind: "say", text: ` ${phrase.toUpperCase()} `, refers_to: askId });

test("approved first: an expiry that comes after appends nothing; expired first: an exact reply after it approves nothing", () =>
  withKit(
    async (kit) => {
      const late = lateInstance(kit, "late");
      const approved = await ask(kit, "book the venue");
      assert.is((await exactReply(kit, approved, "book the venue")).status, 201);
      assert.ok(await approvedAt(kit, approved));
      await late.expireAsk(await askRow(kit, approved));
      assert.is(await expiriesOf(kit, approved), 0, "no expiry after the approval");
      assert.is((await askRow(kit, approved)).stage, "answered");

      const expired = await ask(kit, "order the cake");
      await late.expireAsk(await askRow(kit, expired));
      assert.is(await expiriesOf(kit, expired), 1);
      assert.is((await askRow(kit, expired)).stage, "declined");
      // Inside the window by the server's own clock, so the reply is stored, but the ask is closed.
      assert.is((await exactReply(kit, expired, "order the cake")).status, 201);
      assert.is(await approvedAt(kit, expired), null, "the expiry committed first: the reply approves nothing");
      await late.expireAsk(await askRow(kit, expired));
      assert.is(await expiriesOf(kit, expired), 1, "a second expiry of the same ask appends nothing");
    },
    { env: { CROWS_APPROVAL_WINDOW_MS: String(WINDOW_MS) } },
  ));

test("expiries from several instances racing one exact reply: one expiry or one approval, never both, never two", () =>
  withKit(
    async (kit) => {
      const instances = ["b", "c", "d"].map((name) => lateInstance(kit, name));
      for (const [round, phrase] of ["ship it", "renew it", "pay it", "send it"].entries()) {
        const id = await ask(kit, phrase);
        const row = await askRow(kit, id);
        const racers: Array<Promise<unknown>> = instances
          .slice(0, 1 + (round % 3))
          .map((instance) => instance.expireAsk(row));
        racers.splice(round % 2, 0, exactReply(kit, id, phrase));
        const settled = await Promise.allSettled(racers);
        assert.ok(
          settled.every((s) => s.status === "fulfilled"),
          `round ${round}: neither side fails`,
        );
        const expiries = await expiriesOf(kit, id);
        const approval = await approvedAt(kit, id);
        assert.ok(expiries <= 1, `round ${round}: ${expiries} expiries`);
        assert.is(
          expiries === 1,
          approval === null,
          `round ${round}: exactly one of expiry (${expiries}) and approval (${approval?.toISOString()})`,
        );
        assert.is((await askRow(kit, id)).stage, expiries === 1 ? "declined" : "answered");
      }
    },
    { env: { CROWS_APPROVAL_WINDOW_MS: String(WINDOW_MS) } },
  ));

test.run();
