// The must-respond loop: a stored message that calls for a response invokes exactly one responder
// in the background, which answers through the same posting path as anyone; a response never calls
// for another (docs/nests-chat.md "The must-respond loop"). This front dispatches by addressee.
import type { MessageRecord } from "../message.ts";
import type { NestChat, PostedContext } from "../chat.ts";
import type { ObligationRunner } from "../obligations/index.ts";
import type { NestRecord } from "../store.ts";
import { Boss } from "./boss.ts";
import { CrowTurns } from "./crow.ts";
import { elderAnswers } from "./elder.ts";
import { ResponderVoice, type RespondersDeps } from "./voice.ts";
import { quillAnswers } from "./quill.ts";

export { BOSS_ORDERS } from "./boss.ts";
export { ROOM_TRIES } from "./crow.ts";
export type { LoopKind, LoopReply, RespondersDeps } from "./voice.ts";

export class Responders implements ObligationRunner {
  private readonly voice: ResponderVoice;
  private readonly crows: CrowTurns;
  private readonly boss: Boss;

  constructor(
    private readonly chat: NestChat,
    deps: RespondersDeps,
  ) {
    this.voice = new ResponderVoice(chat, deps);
    this.crows = new CrowTurns(this.voice);
    this.boss = new Boss(this.voice);
  }

  readonly onPosted = async (record: MessageRecord, context: PostedContext): Promise<void> => {
    if (!context.mayCallForResponse) return;
    const nest = context.nest;
    if (record.kind === "nudge") {
      // The crow proceeds on the expectation the nudge points at: its deliver answers that.
      const expectation = record.refers_to ? await this.chat.get(record.refers_to) : null;
      if (record.to !== "") await this.crows.crowResponds(nest, record.to, expectation ?? record, { claim: false });
      return;
    }
    if (record.kind !== "request") return;
    await this.respond(nest, record);
  };

  /** A request's one responder, from the start (a fresh post, or an obligation resumed unclaimed). */
  async respond(nest: NestRecord, record: MessageRecord): Promise<void> {
    switch (record.to) {
      case "Quill":
        return quillAnswers(this.voice, nest, record);
      case "Boss":
        return this.boss.answer(nest, record);
      case "Elder":
        return elderAnswers(this.voice, nest, record);
      case "owner":
      case "Sentry":
        return; // the owner answers for themselves; the Sentry takes no requests
      case "":
        return this.crows.room(nest, record);
      default:
        return this.crows.directed(nest, record);
    }
  }

  /** A crow that claimed the request proceeds (after a nudge, or on the instance that took it over). */
  async proceed(nest: NestRecord, crow: string, request: MessageRecord): Promise<void> {
    await this.crows.crowResponds(nest, crow, request, { claim: false });
  }
}
