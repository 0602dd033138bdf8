// The must-respond loop (FLOCK.md section 6, EVENTS.md "Nests"). A stored message that calls for a
// response invokes exactly one responder, in the background (the POST never waits for it), and
// the responder answers through the same posting path and guardrails as anyone. Nothing polls:
// the posting path calls onPosted once per message, and a message posted as a response never calls
// for another (no cascades).
//
// - a request to a member crow: that crow claims, then delivers (or declines when it cannot:
//   quarantined, or its model failed);
// - a request to the room: the open selector picks one crow (core first, rotating, skipping
//   quarantined); one that cannot take it declines and the next eligible crow is picked (up to
//   ROOM_TRIES crows); a conspiracy: up to `invited` crows, each claiming with a distinct lens;
// - a nudge: its crow delivers;
// - a request to Quill: one deliver to the requester, or a relay (a request authored by Quill to
//   the named member, refers_to the owner's message, tagged_by "harness"), or one say back when
//   Quill cannot name a member;
// - a request to Boss: one say naming the outcome; SPIN / NEST orders run through the registry and
//   the nest store and are refused with the reason. A saturated flock (BOSS_ORDERS orders already
//   in progress, or the flock stopping) means no reply and no write;
// - a request to the Elder: one deliver to the requester.
// A request to the owner calls for no crow; neither does anything that is not a request or nudge.
//
// Every reply goes out through reply(): its kind is the loop's, not the classifier's (tagged_by
// "harness"; Jev's answer is kept as calibration data only), and it is not rate-limited, since the
// loop bounds it to one per request. A member's own posts are tagged and limited as always.
//
// Each request's promise is stored (obligations.ts): the claim, the answer and the decline carry
// `obligations.claim/close/handOn` as writes in their own transaction, so an answer to a request
// already answered is refused and never stored; a resumed obligation comes back through
// respond/proceed.
import type { Model } from "../models/model.ts";
import { renderRequest } from "../models/prompts.ts";
import { parseBoss, parseQuill } from "../models/formats.ts";
import { taskTypeOf } from "../models/heuristics.ts";
import { lensAngle, WORKER_PERSONA_NAMES } from "../models/prompts.ts";
import { personaOf, ROSTER } from "../flock/roster.ts";
import type { CrewPicker } from "../flock/crew.ts";
import { CrowsError, ForbiddenError } from "../errors.ts";
import { safeMessage } from "../flock/flights.ts";
import type { CrowRegistry } from "./registry.ts";
import { requestedSpinTerms, spinRefusalReason } from "./registry.ts";
import type { NestRecord, NestStore } from "./store.ts";
import type { MessageRecord } from "./message.ts";
import type { InternalPost, NestChat, PostedContext } from "./chat.ts";
import type { ObligationRunner, Obligations } from "./obligations/index.ts";

/** How many crows a room request (solo or split) goes to, one after another, before it rests. */
export const ROOM_TRIES = 3;
/** Boss orders in progress at once; a request beyond that finds the flock saturated. */
export const BOSS_ORDERS = 4;

/** The kinds the loop writes its replies in. */
export type LoopKind = "claim" | "deliver" | "decline" | "say" | "request";

export interface LoopReply {
  author: string;
  kind: LoopKind;
  text: string;
  to: string;
  refers_to: string;
}

/** What became of one reply: stored, refused because its author is quarantined, or not stored. */
type Posted = "posted" | "quarantined" | "dropped";
/** What became of a crow's turn at a request. */
type Turn = "answered" | "declined" | "abandoned";
/** What a crow's decline does to the request's obligation: closes it, or hands it to the next crow. */
type OnDecline = "close" | "handOn";
type Within = NonNullable<InternalPost["within"]>;

export interface RespondersDeps {
  model: Model;
  picker: CrewPicker;
  registry: CrowRegistry;
  nests: NestStore;
  obligations: Obligations;
  logLine: (line: string) => void;
}

export class Responders implements ObligationRunner {
  private bossOrders = 0;

  constructor(
    private readonly chat: NestChat,
    private readonly deps: RespondersDeps,
  ) {}

  readonly onPosted = async (record: MessageRecord, context: PostedContext): Promise<void> => {
    if (!context.mayCallForResponse) return;
    const nest = context.nest;
    if (record.kind === "nudge") {
      // The crow proceeds on the expectation the nudge points at: its deliver answers that.
      const expectation = record.refers_to ? await this.chat.get(record.refers_to) : null;
      if (record.to !== "") await this.crowResponds(nest, record.to, expectation ?? record, { claim: false });
      return;
    }
    if (record.kind !== "request") return;
    await this.respond(nest, record);
  };

  /** A request's one responder, from the start (a fresh post, or an obligation resumed unclaimed). */
  async respond(nest: NestRecord, record: MessageRecord): Promise<void> {
    switch (record.to) {
      case "Quill":
        return this.quill(nest, record);
      case "Boss":
        return this.boss(nest, record);
      case "Elder":
        return this.elder(nest, record);
      case "owner":
      case "Sentry":
        return; // the owner answers for themselves; the Sentry takes no requests
      case "":
        return this.room(nest, record);
      default:
        return this.directed(nest, record);
    }
  }

  /** A crow that claimed the request proceeds (after a nudge, or on the instance that took it over). */
  async proceed(nest: NestRecord, crow: string, request: MessageRecord): Promise<void> {
    await this.crowResponds(nest, crow, request, { claim: false });
  }

  // A request to one crow: that crow, or its decline when it cannot answer (quarantined: the
  // directed selector skips it and no other crow is substituted, the requester asked for this one).
  // A crow that is no longer a member is not asked.
  private async directed(nest: NestRecord, request: MessageRecord): Promise<void> {
    const crow = request.to;
    if (!(await this.chat.isQuarantined(crow)) && !(await this.chat.members(nest)).includes(crow)) {
      this.deps.logLine(`nests: ${request.msg_id} is addressed to ${crow}, who is no longer a member; it rests.`);
      return;
    }
    await this.crowResponds(nest, crow, request, { claim: true });
  }

  private async room(nest: NestRecord, request: MessageRecord): Promise<void> {
    if (request.mode === "conspiracy") return this.conspiracy(nest, request);
    // One crow takes it; a crow that cannot (it declines) hands it to the next eligible one. Its
    // decline reopens the obligation for that crow, except the last try's, which closes it.
    const tried = new Set([request.author]);
    for (let attempt = 0; attempt < ROOM_TRIES; attempt++) {
      const [pick] = await this.deps.picker.pick(nest.id, 1, tried);
      if (!pick) {
        this.deps.logLine(`nests: no ${attempt === 0 ? "" : "other "}crow is free to take ${request.msg_id}; it rests.`);
        // Declined and handed on, with nobody left to take it: the decline already posted is the answer.
        if (attempt > 0) await this.deps.obligations.closeWithoutPost(request.msg_id, "", "no other crow is free");
        return;
      }
      const onDecline: OnDecline = attempt < ROOM_TRIES - 1 ? "handOn" : "close";
      if ((await this.crowResponds(nest, pick.crow, request, { claim: true }, onDecline)) !== "declined") return;
      tried.add(pick.crow);
    }
  }

  // Every invitee claims first, each with its own lens, then they deliver side by side.
  private async conspiracy(nest: NestRecord, request: MessageRecord): Promise<void> {
    const picks = await this.deps.picker.pick(nest.id, Math.max(1, request.invited), new Set([request.author]));
    if (picks.length === 0) {
      this.deps.logLine(`nests: no crow is free to take ${request.msg_id}; it rests.`);
      return;
    }
    const lenses = picks.map((pick, index) => ({ crow: pick.crow, lens: { index, of: picks.length } }));
    const claimed: typeof lenses = [];
    for (const entry of lenses) {
      const text = `Claiming take ${entry.lens.index + 1} of ${entry.lens.of}: I'll give ${lensAngle(entry.lens.index)}.`;
      const posted = await this.reply(nest, { author: entry.crow, kind: "claim", text, to: request.author, refers_to: request.msg_id }, { within: this.deps.obligations.claim(request, entry.crow) });
      if (posted === "posted") claimed.push(entry);
      else if (posted === "quarantined") await this.declineQuarantined(nest, entry.crow, request);
    }
    await Promise.all(claimed.map((entry) => this.deliver(nest, entry.crow, request, entry.lens)));
  }

  /** A crow's turn: a claim (unless it answers a nudge), then its deliver, or its decline. */
  private async crowResponds(nest: NestRecord, crow: string, request: MessageRecord, how: { claim: boolean }, onDecline: OnDecline = "close"): Promise<Turn> {
    if (await this.chat.isQuarantined(crow)) return this.declineQuarantined(nest, crow, request, onDecline);
    if (how.claim) {
      const text = `I'll take this one: ${clip(request.text, 120)}`;
      const claimed = await this.reply(nest, { author: crow, kind: "claim", text, to: request.author, refers_to: request.msg_id }, { within: this.deps.obligations.claim(request, crow) });
      if (claimed === "quarantined") return this.declineQuarantined(nest, crow, request, onDecline);
      if (claimed === "dropped") return "abandoned";
    }
    return this.deliver(nest, crow, request, undefined, onDecline);
  }

  /** The crow's model call, then its deliver to the requester, or a decline saying why it could not. */
  private async deliver(nest: NestRecord, crow: string, request: MessageRecord, lens?: { index: number; of: number }, onDecline: OnDecline = "close"): Promise<Turn> {
    let text: string;
    let kind: "deliver" | "decline" = "deliver";
    try {
      const persona = await this.personaOf(crow);
      const reply = await this.deps.model.generate(
        renderRequest({
          role: "crow",
          input: { task: request.text, taskType: taskTypeOf(request.text), ...(lens ? { lens } : {}) },
          speaker: crow,
          persona,
          signal: this.chat.signal,
        }),
      );
      text = reply.text.trim() || "(no answer)";
    } catch (error) {
      if (this.chat.signal.aborted) return "abandoned";
      kind = "decline";
      text = `I can't finish this one: ${safeMessage(error)}`;
    }
    const within = kind === "deliver" ? this.deps.obligations.close(request.msg_id, crow, "answered") : this.declined(request, crow, onDecline);
    const posted = await this.reply(nest, { author: crow, kind, text, to: request.author, refers_to: request.msg_id }, { within });
    // Quarantined between its claim and its deliver (the Sentry flagged the claim): the work is withheld.
    if (posted === "quarantined") return this.declineQuarantined(nest, crow, request, onDecline);
    if (posted === "dropped") return "abandoned";
    return kind === "deliver" ? "answered" : "declined";
  }

  /** The loop's decline for a crow that cannot answer because it is quarantined; no model call. */
  private async declineQuarantined(nest: NestRecord, crow: string, request: MessageRecord, onDecline: OnDecline = "close"): Promise<Turn> {
    const text = `I can't take this one: ${crow} is quarantined pending the owner's decision.`;
    const within = this.declined(request, crow, onDecline);
    const posted = await this.reply(nest, { author: crow, kind: "decline", text, to: request.author, refers_to: request.msg_id }, { quarantineDecline: true, within });
    return posted === "posted" ? "declined" : "abandoned";
  }

  /** A decline's write on the obligation: it closes it, or hands it on to the room's next crow. */
  private declined(request: MessageRecord, crow: string, onDecline: OnDecline): Within {
    return onDecline === "handOn" ? this.deps.obligations.handOn(request.msg_id, crow) : this.deps.obligations.close(request.msg_id, crow, "declined");
  }

  private async quill(nest: NestRecord, request: MessageRecord): Promise<void> {
    const members = await this.chat.members(nest);
    let reply;
    try {
      const answer = await this.deps.model.generate(
        renderRequest({ role: "quill", input: { requester: request.author, text: request.text, members }, speaker: "Quill", persona: "Quill", signal: this.chat.signal }),
      );
      reply = parseQuill(answer.text);
    } catch (error) {
      if (this.chat.signal.aborted) return;
      reply = { kind: "invalid" as const, error: safeMessage(error) };
    }
    const back = { author: "Quill", to: request.author, refers_to: request.msg_id };
    const answering = { within: this.deps.obligations.close(request.msg_id, "Quill", "answered") };
    switch (reply.kind) {
      case "relay":
        if (members.includes(reply.to)) {
          // The relay rides the record shape: a request by Quill to the crow; it calls for that crow.
          await this.reply(nest, { author: "Quill", kind: "request", text: reply.text, to: reply.to, refers_to: request.msg_id }, { ...answering, callsForResponse: true });
          return;
        }
        await this.reply(nest, { ...back, kind: "say", text: `I can't pass this to ${reply.to}: ${reply.to} is not a member of this nest.` }, answering);
        return;
      case "say":
        await this.reply(nest, { ...back, kind: "say", text: reply.text }, answering);
        return;
      case "answer":
        await this.reply(nest, { ...back, kind: "deliver", text: reply.text }, answering);
        return;
      case "invalid":
        await this.reply(nest, { ...back, kind: "say", text: `I couldn't answer that just now (${reply.error}).` }, answering);
        return;
    }
  }

  // Boss works through the flock like any crow, and its say is a loop reply like any crow's (not
  // rate-limited: its requester's post already was). A saturated flock (the flock stopping, or
  // BOSS_ORDERS orders already in progress) means no reply, no model call and no write.
  private async boss(nest: NestRecord, request: MessageRecord): Promise<void> {
    if (this.chat.signal.aborted) return;
    if (this.bossOrders >= BOSS_ORDERS) {
      this.deps.logLine(`nests: Boss is saturated (${this.bossOrders} orders in progress); ${request.msg_id} gets no reply.`);
      await this.deps.obligations.closeWithoutPost(request.msg_id, "Boss", "Boss is saturated");
      return;
    }
    this.bossOrders++;
    try {
      await this.bossOrder(nest, request);
    } finally {
      this.bossOrders--;
    }
  }

  private async bossOrder(nest: NestRecord, request: MessageRecord): Promise<void> {
    const [registry, nests] = await Promise.all([this.deps.registry.list(), this.deps.nests.list()]);
    let text: string;
    try {
      const answer = await this.deps.model.generate(
        renderRequest({
          role: "boss",
          input: {
            requester: request.author,
            text: request.text,
            personas: [...WORKER_PERSONA_NAMES],
            registry: registry.map((c) => c.name),
            nests: nests.map((n) => n.id),
          },
          speaker: "Boss",
          persona: "Boss",
          signal: this.chat.signal,
        }),
      );
      text = await this.execute(parseBoss(answer.text), request);
    } catch (error) {
      if (this.chat.signal.aborted) return;
      text = `Boss couldn't take that order just now (${safeMessage(error)}).`;
    }
    await this.reply(nest, { author: "Boss", kind: "say", to: request.author, refers_to: request.msg_id, text }, { within: this.deps.obligations.close(request.msg_id, "Boss", "answered") });
  }

  /** Runs a Boss order through the registry or the nest store; the say that names the outcome. */
  private async execute(order: ReturnType<typeof parseBoss>, request: MessageRecord): Promise<string> {
    switch (order.kind) {
      case "spin":
        try {
          // The requester's explicit persona and trust are what the guardrails check, whatever the
          // model put in the order: an unknown persona is refused, "trusted" is clamped to regular.
          const asked = requestedSpinTerms(request.text);
          const crow = await this.deps.registry.spin({ name: order.name, persona: asked.persona ?? order.persona, trust: asked.trust ?? order.trust });
          return `Spun up ${crow.name}: a new crow joined the flock, running on ${crow.persona}'s habits, starting as a ${crow.trust}.`;
        } catch (error) {
          const reason = spinRefusalReason(error);
          if (!reason) throw error;
          return `Refused to spin up ${order.name}: ${reason}. ${(error as Error).message}`;
        }
      case "nest":
        try {
          const nest = await this.deps.nests.create({ name: order.name, crows: order.crows });
          return `Created nest ${nest.name} (${nest.id}) with ${nest.crows.join(", ")}.`;
        } catch (error) {
          if (!(error instanceof CrowsError)) throw error;
          return `Refused to create nest ${order.name}: ${error.message}`;
        }
      case "reply":
        return order.text;
      case "invalid":
        return `Boss couldn't read that order (${order.error}).`;
    }
  }

  private async elder(nest: NestRecord, request: MessageRecord): Promise<void> {
    let text: string;
    let kind: "deliver" | "say" = "deliver";
    try {
      const reply = await this.deps.model.generate(
        renderRequest({ role: "crow", input: { task: request.text, taskType: taskTypeOf(request.text) }, speaker: "Elder", persona: "Elder", signal: this.chat.signal }),
      );
      text = reply.text;
    } catch (error) {
      if (this.chat.signal.aborted) return;
      kind = "say";
      text = `The Elder couldn't answer just now (${safeMessage(error)}).`;
    }
    await this.reply(nest, { author: "Elder", kind, to: request.author, refers_to: request.msg_id, text }, { within: this.deps.obligations.close(request.msg_id, "Elder", "answered") });
  }

  /**
   * Posts one reply of the loop's through the one posting path. Its kind is the loop's (tagged_by
   * "harness"; Jev is asked only for calibration) and it is not rate-limited: the loop bounds it to
   * one per request. A reply never calls for another, except Quill's relay (`callsForResponse`).
   * A guardrail's refusal (403, 400, ...) ends this reply, logged; so does a refusal from `within`
   * (the obligation is no longer this reply's to close: another answer got there first).
   */
  private async reply(nest: NestRecord, reply: LoopReply, options: { callsForResponse?: boolean; quarantineDecline?: boolean; within?: Within } = {}): Promise<Posted> {
    if (this.chat.signal.aborted) return "dropped";
    const { kind, ...input } = reply;
    try {
      await this.chat.post(nest.id, input, {
        forcedKind: kind,
        response: !options.callsForResponse,
        unmetered: true,
        ...(options.quarantineDecline ? { quarantineDecline: true } : {}),
        ...(options.within ? { within: options.within } : {}),
      });
      return "posted";
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      this.deps.logLine(`nests: ${reply.author}'s ${kind} in ${nest.id} was refused (${error.code}).`);
      return error instanceof ForbiddenError ? "quarantined" : "dropped";
    }
  }

  private async personaOf(crow: string): Promise<string> {
    if (ROSTER.includes(crow) || personaOf(crow)) return crow;
    return (await this.deps.registry.get(crow))?.persona ?? "Corvina";
  }
}

function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1).trimEnd()}…`;
}
