// The Sentry's watchdog (EVENTS.md Guardrails "Watchdog", "flag"; FLOCK.md section 6). Every crow
// claim or deliver that refers to a request gets one classifier call with the three noul questions
// against that request. A breach (any of states_fact_without_source / contradicts_earlier at or
// above the band, or answers_request at or below 1 - band) quarantines the crow: the Sentry posts a
// flag naming the scores, then an ask_owner to the owner, refers_to the flag, approval_phrase
// "reinstate <crow>", offering the exact reinstate / retire replies and quoting the flag. At most
// one flag per crow per referent; later breaches are logged, not posted. An unsure answer never
// quarantines. Every verdict is logged as a `watch` event on the stream watch:<nest_id>, kept off
// the nest stream so a nest's seq stays its message number. Owner messages are never inspected.
import type { Config } from "../config.ts";
import type { PrismaClient } from "../generated/prisma/client.ts";
import type { EventLog } from "../log/event-log.ts";
import type { Classifier } from "../classifier/jev.ts";
import { watchQuestions, watchState, watchVerdict, type WatchVerdict } from "../classifier/questions.ts";
import { SERVICE_ROLE_NAMES } from "../flock/roster.ts";
import { KeyedLock } from "../util/keyed-lock.ts";
import { reinstatePhrase, retirePhrase } from "./asks.ts";
import { watchStream, type MessageRecord, type NestChat, type PostedContext } from "./messages.ts";

/** How many earlier messages the contradicts_earlier question sees. */
export const EARLIER_CONTEXT = 10;

export interface WatchdogDeps {
  config: Config;
  prisma: PrismaClient;
  log: EventLog;
  classifier: Classifier;
}

export class Watchdog {
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
    if (crow === "owner" || crow === "harness" || SERVICE_ROLE_NAMES.includes(crow)) return;
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
      ? await this.deps.prisma.quarantine.findUnique({ where: { crow_referent: { crow, referent } }, select: { id: true } })
      : null;
    const flagging = verdict.sure && verdict.breach && !already;
    const { answers_request, states_fact_without_source, contradicts_earlier } = verdict.scores;
    await this.deps.log.append(watchStream(nestId), "watch", {
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
    });
    if (flagging) await this.flag(nestId, record, referent, verdict);
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
          const created = await tx.quarantine.create({ data: { crow, nestId, flagMsgId: row.id, askMsgId: "", referent } });
          quarantineId = created.id;
        },
      },
    );
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
        },
      },
    );
  }
}
