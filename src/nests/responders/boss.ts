// A request to Boss: one say naming the outcome of its order; SPIN and NEST orders run through the
// registry and the nest store. A saturated flock means no reply and no write (docs/nests-chat.md
// "Boss").
import { parseBoss } from "../../models/formats.ts";
import { WORKER_PERSONA_NAMES } from "../../models/prompts.ts";
import { CrowsError } from "../../base/errors.ts";
import { requestedSpinTerms, spinRefusalReason } from "../registry.ts";
import type { MessageRecord } from "../message.ts";
import type { NestRecord } from "../store.ts";
import type { ResponderVoice } from "./voice.ts";

/** Boss orders in progress at once; a request beyond that finds the flock saturated. */
export const BOSS_ORDERS = 4;

export class Boss {
  private orders = 0;

  constructor(private readonly voice: ResponderVoice) {}

  // Boss works through the flock like any crow, and its say is a loop reply like any crow's (not
  // rate-limited: its requester's post already was). A saturated flock (the flock stopping, or
  // BOSS_ORDERS orders already in progress) means no reply, no model call and no write.
  async answer(nest: NestRecord, request: MessageRecord): Promise<void> {
    if (this.voice.chat.signal.aborted) return;
    if (this.orders >= BOSS_ORDERS) {
      this.voice.deps.logLine(
        `nests: Boss is saturated (${this.orders} orders in progress); ${request.msg_id} gets no reply.`,
      );
      await this.voice.obligations.closeWithoutPost(request.msg_id, "Boss", "Boss is saturated");
      return;
    }
    this.orders++;
    try {
      await this.order(nest, request);
    } finally {
      this.orders--;
    }
  }

  private async order(nest: NestRecord, request: MessageRecord): Promise<void> {
    const [registry, nests] = await Promise.all([this.voice.deps.registry.list(), this.voice.deps.nests.list()]);
    const text = await this.voice.speak(
      {
        role: "boss",
        input: {
          requester: request.author,
          text: request.text,
          personas: [...WORKER_PERSONA_NAMES],
          registry: registry.map((c) => c.name),
          nests: nests.map((n) => n.id),
        },
      },
      { speaker: "Boss", persona: "Boss" },
      (answer) => this.execute(parseBoss(answer), request),
      (reason) => `Boss couldn't take that order just now (${reason}).`,
    );
    if (text === undefined) return;
    await this.voice.reply(
      nest,
      { author: "Boss", kind: "say", to: request.author, refers_to: request.msg_id, text },
      { within: this.voice.obligations.close(request.msg_id, "Boss", "answered") },
    );
  }

  /** Runs a Boss order through the registry or the nest store; the say that names the outcome. */
  private async execute(order: ReturnType<typeof parseBoss>, request: MessageRecord): Promise<string> {
    switch (order.kind) {
      case "spin":
        try {
          // The requester's explicit persona and trust are what the guardrails check, whatever the
          // model put in the order: an unknown persona is refused, "trusted" is clamped to regular.
          const asked = requestedSpinTerms(request.text);
          const crow = await this.voice.deps.registry.spin({
            name: order.name,
            persona: asked.persona ?? order.persona,
            trust: asked.trust ?? order.trust,
          });
          return `Spun up ${crow.name}: a new crow joined the flock, running on ${crow.persona}'s habits, starting as a ${crow.trust}.`;
        } catch (error) {
          const reason = spinRefusalReason(error);
          if (!reason) throw error;
          return `Refused to spin up ${order.name}: ${reason}. ${(error as Error).message}`;
        }
      case "nest":
        try {
          const nest = await this.voice.deps.nests.create({ name: order.name, crows: order.crows });
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
}
