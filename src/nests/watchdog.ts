// The Sentry's watchdog (docs/contract.md Guardrails "Watchdog", "flag"; docs/flock.md §6): one classifier
// call per crow claim or deliver that refers to a request; a breach quarantines the crow with a flag
// and an ask_owner, and every verdict is a `watch` event on watch:<nest_id>. The rules are in
// docs/nests-chat.md "The watchdog"; each inspection is an obligation (obligations.ts), so it
// survives its instance's death.
import type { Config } from "../base/config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import { watchQuestions, watchState, watchVerdict, type WatchVerdict } from "../classifier/questions.ts";
import { SERVICE_ROLE_NAMES } from "../base/roster.ts";
import { KeyedLock } from "../base/util/keyed-lock.ts";
import { ConflictError } from "../base/errors.ts";
import { reinstatePhrase, retirePhrase } from "./asks.ts";
import { SERVER_VOICE, type MessageRecord } from "./message.ts";
import { watchStream } from "../base/streams.ts";
import type { NestChat, PostedContext } from "./chat.ts";
import type { Obligations, WatchResumer } from "./obligations/index.ts";
import type { NestRecord } from "./store.ts";

/** How many earlier messages the contradicts_earlier question sees. */
export const EARLIER_CONTEXT = 10;

export interface WatchdogDeps {
  config: Config;
  prisma: PrismaClient;
  log: EventLog;
  classifier: Classifier;
  obligations: Obligations;
}

export class Watchdog implements WatchResumer {
  // One inspection per crow at a time: "at most one flag per crow per referent" must not race.
  private readonly lock = new KeyedLock();

  constructor(
    private readonly chat: NestChat,
    private readonly deps: WatchdogDeps,
  ) {}

  /** The listener the posting path calls for every stored message. */
  readonly onPosted = async (record: MessageRecord, context: PostedContext): Promise<void> => {
    if (record.kind !== "claim" && record.kind !== "deliver") return;
    const crow = record.author;
    if (crow === "owner" || crow === SERVER_VOICE || SERVICE_ROLE_NAMES.includes(crow)) return;
    if (record.refers_to === "") return;
    const request = await this.deps.prisma.message.findUnique({ where: { id: record.refers_to } });
    if (!request || request.kind !== "request" || request.nestId !== context.nest.id) return;
    const n = Number(record.msg_id.slice(context.nest.id.length + 1));
    const earlier = await this.deps.prisma.message.findMany({
      where: { nestId: context.nest.id, n: { lt: n }, NOT: { id: request.id } },
      orderBy: { n: "desc" },
      take: EARLIER_CONTEXT,
      select: { author: true, text: true },
    });
    const answers = await this.deps.classifier.ask({
      state: watchState({
        message: record.text,
        kind: record.kind,
        author: crow,
        request: request.text,
        earlier: earlier.reverse().map((m) => `${m.author}: ${m.text}`),
      }),
      questions: watchQuestions(),
      subject: record.msg_id,
    });
    const verdict = watchVerdict(answers, this.deps.config.jevThreshold);
    await this.lock.run(crow, () => this.judge(context.nest.id, record, request.id, verdict));
  };

  private async judge(nestId: string, record: MessageRecord, referent: string, verdict: WatchVerdict): Promise<void> {
    const crow = record.author;
    const already = verdict.breach
      ? await this.deps.prisma.quarantine.findUnique({
          where: { crow_referent: { crow, referent } },
          select: { id: true },
        })
      : null;
    const flagging = verdict.sure && verdict.breach && !already;
    const { answers_request, states_fact_without_source, contradicts_earlier } = verdict.scores;
    const watched = {
      nest_id: nestId,
      msg_id: record.msg_id,
      crow,
      refers_to: referent,
      answers_request: answers_request ?? null,
      states_fact_without_source: states_fact_without_source ?? null,
      contradicts_earlier: contradicts_earlier ?? null,
      sure: verdict.sure,
      breach: verdict.breach,
      // "flagged": this breach was posted; a repeat for the same referent is logged only.
      flagged: flagging,
      ts: new Date().toISOString(),
    };
    const judged = this.deps.obligations.judged(record.msg_id, flagging);
    const logged = await this.deps.log
      .appendWith(watchStream(nestId), async (tx) => {
        await judged(tx);
        return [{ name: "watch", payload: watched }];
      })
      .catch((error: unknown) => {
        if (error instanceof ConflictError) return null; // another instance judged it first
        throw error;
      });
    if (logged && flagging) await this.flag(nestId, record, referent, verdict);
  }

  /** An inspection taken over from a dead instance: inspect from the start, or finish flag and ask. */
  async resumeWatch(nest: NestRecord, record: MessageRecord, judged: boolean): Promise<void> {
    if (!judged) return this.onPosted(record, { nest, mayCallForResponse: false });
    const crow = record.author;
    const quarantine = await this.deps.prisma.quarantine.findUnique({
      where: { crow_referent: { crow, referent: record.refers_to } },
    });
    if (quarantine && quarantine.askMsgId === "") {
      const flag = await this.chat.get(quarantine.flagMsgId);
      if (flag) return this.ask(nest.id, record, flag, quarantine.id);
    }
    if (!quarantine) {
      // Judged a breach, then the instance died before the flag: the verdict is in the watch log.
      const events = await this.deps.log.read(watchStream(nest.id), 0, 100_000);
      const verdict = events
        .map((e) => JSON.parse(e.payload))
        .find((p) => p.msg_id === record.msg_id && p.flagged === true);
      if (verdict) {
        const scores = {
          answers_request: verdict.answers_request ?? undefined,
          states_fact_without_source: verdict.states_fact_without_source ?? undefined,
          contradicts_earlier: verdict.contradicts_earlier ?? undefined,
        };
        return this.flag(nest.id, record, record.refers_to, { sure: true, breach: true, scores } as WatchVerdict);
      }
    }
    await this.deps.obligations.closeWithoutPost(record.msg_id, "Sentry", "its flag and ask were already posted");
  }

  private async flag(nestId: string, record: MessageRecord, referent: string, verdict: WatchVerdict): Promise<void> {
    const crow = record.author;
    const band = this.deps.config.jevThreshold;
    const s = verdict.scores;
    const fmt = (v: number | undefined) => (v === undefined ? "?" : v.toFixed(2));
    const flagText =
      `${crow}'s ${record.kind} ${record.msg_id} on request ${referent} looks like a contract breach: ` +
      `answers_request ${fmt(s.answers_request)}, states_fact_without_source ${fmt(s.states_fact_without_source)}, ` +
      `contradicts_earlier ${fmt(s.contradicts_earlier)} (band ${band}). ${crow} is quarantined pending the owner's decision.`;
    let quarantineId = 0;
    const flag = await this.chat.post(
      nestId,
      { author: "Sentry", text: flagText, to: crow, refers_to: record.msg_id },
      {
        forcedKind: "flag",
        unmetered: true,
        response: true,
        within: async (tx, row) => {
          const created = await tx.quarantine.create({
            data: { crow, nestId, flagMsgId: row.id, askMsgId: "", referent },
          });
          quarantineId = created.id;
        },
      },
    );
    await this.ask(nestId, record, flag, quarantineId);
  }

  /** The Sentry's ask_owner after its flag; it closes the inspection in its own transaction. */
  private async ask(nestId: string, record: MessageRecord, flag: MessageRecord, quarantineId: number): Promise<void> {
    const crow = record.author;
    const minutes = Math.max(1, Math.round(this.deps.config.approvalWindowMs / 60_000));
    const askText =
      `The Sentry quarantined ${crow}. Flag ${flag.msg_id}: "${flag.text}" ` +
      `Reply "${reinstatePhrase(crow)}" to lift the quarantine, or "${retirePhrase(crow)}" to remove ${crow} from the flock. ` +
      `Anything else, or no answer within ${minutes} minute${minutes === 1 ? "" : "s"}, keeps ${crow} quarantined.`;
    await this.chat.post(
      nestId,
      { author: "Sentry", text: askText, to: "owner", refers_to: flag.msg_id, approval_phrase: reinstatePhrase(crow) },
      {
        forcedKind: "ask_owner",
        unmetered: true,
        response: true,
        within: async (tx, row) => {
          await tx.quarantine.update({ where: { id: quarantineId }, data: { askMsgId: row.id } });
          await this.deps.obligations.asked(record.msg_id)(tx, row);
        },
      },
    );
  }
}
