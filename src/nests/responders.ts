// The must-respond loop (FLOCK.md section 6, EVENTS.md "Nests"). A stored message that calls for a
// response invokes exactly one responder, in the background (the POST never waits for it), and
// the responder answers through the same posting path and guardrails as anyone. Nothing polls:
// the posting path calls onPosted once per message, and a message posted as a response never calls
// for another (no cascades).
//
// - a request to a member crow: that crow claims, then delivers (or declines when it cannot);
// - a request to the room: the open selector picks one crow (core first, rotating, skipping
//   quarantined); a conspiracy: up to `invited` crows, each claiming with a distinct lens;
// - a nudge: its crow delivers;
// - a request to Quill: one deliver to the requester, or a relay (a request authored by Quill to
//   the named member, refers_to the owner's message, tagged_by "harness"), or one say back when
//   Quill cannot name a member;
// - a request to Boss: one say naming the outcome; SPIN / NEST orders run through the registry and
//   the nest store and are refused with the reason. A saturated flock (Boss inside a rate-limit
//   cooldown, or the flock stopping) means no reply and no write;
// - a request to the Elder: one deliver to the requester.
// A request to the owner calls for no crow; neither does anything that is not a request or nudge.
import type { Model } from "../models/model.ts";
import { renderRequest } from "../models/prompts.ts";
import { parseBoss, parseQuill } from "../models/formats.ts";
import { taskTypeOf } from "../models/heuristics.ts";
import { lensAngle, WORKER_PERSONA_NAMES } from "../models/prompts.ts";
import { personaOf, ROSTER } from "../flock/roster.ts";
import type { CrewPicker } from "../flock/crew.ts";
import type { RateLimiter } from "../flock/rate-limit.ts";
import { CrowsError } from "../errors.ts";
import { safeMessage } from "../flock/flights.ts";
import type { CrowRegistry } from "./registry.ts";
import { spinRefusalReason } from "./registry.ts";
import type { NestRecord, NestStore } from "./store.ts";
import type { MessageRecord, NestChat, PostedContext } from "./messages.ts";

export interface RespondersDeps {
  model: Model;
  picker: CrewPicker;
  limiter: RateLimiter;
  registry: CrowRegistry;
  nests: NestStore;
  logLine: (line: string) => void;
}

export class Responders {
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
  };

  // A request to one crow: that crow, unless it is quarantined (the directed selector skips it and
  // the request rests) or no longer a member.
  private async directed(nest: NestRecord, request: MessageRecord): Promise<void> {
    const crow = request.to;
    if (await this.chat.isQuarantined(crow)) {
      this.deps.logLine(`nests: ${request.msg_id} is addressed to ${crow}, who is quarantined; it rests.`);
      return;
    }
    if (!(await this.chat.members(nest)).includes(crow)) return;
    await this.crowResponds(nest, crow, request, { claim: true });
  }

  private async room(nest: NestRecord, request: MessageRecord): Promise<void> {
    const conspiracy = request.mode === "conspiracy";
    const count = conspiracy ? Math.max(1, request.invited) : 1;
    const picks = await this.deps.picker.pick(nest.id, count, new Set([request.author]));
    if (picks.length === 0) {
      this.deps.logLine(`nests: no crow is free to take ${request.msg_id}; it rests.`);
      return;
    }
    if (!conspiracy) {
      await this.crowResponds(nest, picks[0]!.crow, request, { claim: true });
      return;
    }
    // Every invitee claims first, each with its own lens, then they deliver side by side.
    const lenses = picks.map((pick, index) => ({ crow: pick.crow, lens: { index, of: picks.length } }));
    const claimed: typeof lenses = [];
    for (const entry of lenses) {
      const ok = await this.tryPost(nest, {
        author: entry.crow,
        kind: "claim",
        text: `Claiming take ${entry.lens.index + 1} of ${entry.lens.of}: I'll give ${lensAngle(entry.lens.index)}.`,
        refers_to: request.msg_id,
      });
      if (ok) claimed.push(entry);
    }
    await Promise.all(claimed.map((entry) => this.deliver(nest, entry.crow, request, entry.lens)));
  }

  private async crowResponds(nest: NestRecord, crow: string, request: MessageRecord, how: { claim: boolean }): Promise<void> {
    if (how.claim) {
      const claimed = await this.tryPost(nest, { author: crow, kind: "claim", text: `I'll take this one: ${clip(request.text, 120)}`, refers_to: request.msg_id });
      if (!claimed) return;
    }
    await this.deliver(nest, crow, request);
  }

  /** The crow's model call, then its deliver, or a decline saying why it could not. */
  private async deliver(nest: NestRecord, crow: string, request: MessageRecord, lens?: { index: number; of: number }): Promise<void> {
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
      if (this.chat.signal.aborted) return;
      kind = "decline";
      text = `I can't finish this one: ${safeMessage(error)}`;
    }
    await this.tryPost(nest, { author: crow, kind, text, refers_to: request.msg_id });
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
    switch (reply.kind) {
      case "relay":
        if (members.includes(reply.to)) {
          // The relay rides the record shape: a request by Quill to the crow; it calls for that crow.
          await this.tryPost(nest, { author: "Quill", text: reply.text, to: reply.to, refers_to: request.msg_id }, { forcedKind: "request", response: false });
          return;
        }
        await this.tryPost(nest, { ...back, kind: "say", text: `I can't pass this to ${reply.to}: ${reply.to} is not a member of this nest.` }, { response: true });
        return;
      case "say":
        await this.tryPost(nest, { ...back, kind: "say", text: reply.text }, { response: true });
        return;
      case "answer":
        await this.tryPost(nest, { ...back, kind: "deliver", text: reply.text }, { response: true });
        return;
      case "invalid":
        await this.tryPost(nest, { ...back, kind: "say", text: `I couldn't answer that just now (${reply.error}).` }, { response: true });
        return;
    }
  }

  private async boss(nest: NestRecord, request: MessageRecord): Promise<void> {
    // Boss works through the flock like any crow: in a cooldown it does nothing at all.
    if (this.chat.signal.aborted) return;
    const admission = await this.deps.limiter.admit("Boss");
    if (!admission.admitted) {
      this.deps.logLine(`nests: Boss is saturated (cooldown ${admission.cooldownS}s); ${request.msg_id} gets no reply.`);
      return;
    }
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
      text = await this.execute(parseBoss(answer.text));
    } catch (error) {
      if (this.chat.signal.aborted) return;
      text = `Boss couldn't take that order just now (${safeMessage(error)}).`;
    }
    await this.tryPost(nest, { author: "Boss", kind: "say", to: request.author, refers_to: request.msg_id, text }, { response: true, admitted: true });
  }

  /** Runs a Boss order through the registry or the nest store; the say that names the outcome. */
  private async execute(order: ReturnType<typeof parseBoss>): Promise<string> {
    switch (order.kind) {
      case "spin":
        try {
          const crow = await this.deps.registry.spin({ name: order.name, persona: order.persona, trust: order.trust });
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
    await this.tryPost(nest, { author: "Elder", kind, to: request.author, refers_to: request.msg_id, text }, { response: true });
  }

  /** Posts through the one path; a guardrail's refusal (403, 429, ...) ends this response, logged. */
  private async tryPost(
    nest: NestRecord,
    input: { author: string; text: string; kind?: string; to?: string; refers_to?: string },
    internal: { forcedKind?: "request"; response?: boolean; admitted?: boolean } = { response: true },
  ): Promise<boolean> {
    if (this.chat.signal.aborted) return false;
    try {
      await this.chat.post(nest.id, input, { response: true, ...internal });
      return true;
    } catch (error) {
      if (!(error instanceof CrowsError)) throw error;
      this.deps.logLine(`nests: ${input.author}'s ${input.kind ?? "message"} in ${nest.id} was refused (${error.code}).`);
      return false;
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
