// A crow's turn at a request: directed to it, picked for the room (up to ROOM_TRIES crows, each
// decline handing it on), or one of a conspiracy's lenses; a claim, then a deliver or a decline
// (docs/nests-chat.md "The must-respond loop").
import { lensAngle } from "../../models/prompts.ts";
import { taskTypeOf } from "../../models/heuristics.ts";
import { personaOf, ROSTER } from "../../base/roster.ts";
import type { MessageRecord } from "../message.ts";
import type { NestRecord } from "../store.ts";
import type { ResponderVoice, Within } from "./voice.ts";
import { clip } from "../../base/util/clip.ts";

/** How many crows a room request (solo or split) goes to, one after another, before it rests. */
export const ROOM_TRIES = 3;

/** What became of a crow's turn at a request. */
type Turn = "answered" | "declined" | "abandoned";
/** What a crow's decline does to the request's obligation: closes it, or hands it to the next crow. */
type OnDecline = "close" | "handOn";

export class CrowTurns {
  constructor(private readonly voice: ResponderVoice) {}

  // A request to one crow: that crow, or its decline when it cannot answer (quarantined: the
  // directed selector skips it and no other crow is substituted, the requester asked for this one).
  // A crow that is no longer a member is not asked.
  async directed(nest: NestRecord, request: MessageRecord): Promise<void> {
    const crow = request.to;
    const { chat } = this.voice;
    if (!(await chat.isQuarantined(crow)) && !(await chat.members(nest)).includes(crow)) {
      this.voice.deps.logLine(`nests: ${request.msg_id} is addressed to ${crow}, who is no longer a member; it rests.`);
      return;
    }
    await this.crowResponds(nest, crow, request, { claim: true });
  }

  async room(nest: NestRecord, request: MessageRecord): Promise<void> {
    if (request.mode === "conspiracy") return this.conspiracy(nest, request);
    // One crow takes it; a crow that cannot (it declines) hands it to the next eligible one. Its
    // decline reopens the obligation for that crow, except the last try's, which closes it.
    const tried = new Set([request.author]);
    for (let attempt = 0; attempt < ROOM_TRIES; attempt++) {
      const [pick] = await this.voice.deps.picker.pick(nest.id, 1, tried);
      if (!pick) {
        this.voice.deps.logLine(
          `nests: no ${attempt === 0 ? "" : "other "}crow is free to take ${request.msg_id}; it rests.`,
        );
        // Declined and handed on, with nobody left to take it: the decline already posted is the answer.
        if (attempt > 0) await this.voice.obligations.closeWithoutPost(request.msg_id, "", "no other crow is free");
        return;
      }
      const onDecline: OnDecline = attempt < ROOM_TRIES - 1 ? "handOn" : "close";
      if ((await this.crowResponds(nest, pick.crow, request, { claim: true }, onDecline)) !== "declined") return;
      tried.add(pick.crow);
    }
  }

  // Every invitee claims first, each with its own lens, then they deliver side by side.
  private async conspiracy(nest: NestRecord, request: MessageRecord): Promise<void> {
    const picks = await this.voice.deps.picker.pick(nest.id, Math.max(1, request.invited), new Set([request.author]));
    if (picks.length === 0) {
      this.voice.deps.logLine(`nests: no crow is free to take ${request.msg_id}; it rests.`);
      return;
    }
    const lenses = picks.map((pick, index) => ({ crow: pick.crow, lens: { index, of: picks.length } }));
    const claimed: typeof lenses = [];
    for (const entry of lenses) {
      const text = `Claiming take ${entry.lens.index + 1} of ${entry.lens.of}: I'll give ${lensAngle(entry.lens.index)}.`;
      const posted = await this.voice.reply(
        nest,
        { author: entry.crow, kind: "claim", text, to: request.author, refers_to: request.msg_id },
        { within: this.voice.obligations.claim(request, entry.crow) },
      );
      if (posted === "posted") claimed.push(entry);
      else if (posted === "quarantined") await this.declineQuarantined(nest, entry.crow, request);
    }
    await Promise.all(claimed.map((entry) => this.deliver(nest, entry.crow, request, entry.lens)));
  }

  /** A crow's turn: a claim (unless it answers a nudge), then its deliver, or its decline. */
  async crowResponds(
    nest: NestRecord,
    crow: string,
    request: MessageRecord,
    how: { claim: boolean },
    onDecline: OnDecline = "close",
  ): Promise<Turn> {
    if (await this.voice.chat.isQuarantined(crow)) return this.declineQuarantined(nest, crow, request, onDecline);
    if (how.claim) {
      const text = `I'll take this one: ${clip(request.text, 120)}`;
      const claimed = await this.voice.reply(
        nest,
        { author: crow, kind: "claim", text, to: request.author, refers_to: request.msg_id },
        { within: this.voice.obligations.claim(request, crow) },
      );
      if (claimed === "quarantined") return this.declineQuarantined(nest, crow, request, onDecline);
      if (claimed === "dropped") return "abandoned";
    }
    return this.deliver(nest, crow, request, undefined, onDecline);
  }

  /** The crow's model call, then its deliver to the requester, or a decline saying why it could not. */
  private async deliver(
    nest: NestRecord,
    crow: string,
    request: MessageRecord,
    lens?: { index: number; of: number },
    onDecline: OnDecline = "close",
  ): Promise<Turn> {
    const taskType = taskTypeOf(request.text);
    const spoken = await this.voice.speak<{ kind: "deliver" | "decline"; text: string }>(
      { role: "crow", input: { task: request.text, taskType, ...(lens ? { lens } : {}) } },
      { speaker: crow, persona: () => this.personaOf(crow) },
      (text) => ({ kind: "deliver", text: text.trim() || "(no answer)" }),
      (reason) => ({ kind: "decline", text: `I can't finish this one: ${reason}` }),
      { nestId: nest.id, requestId: request.msg_id, slot: lens ? `lens-${lens.index}` : "nest", crow, taskType },
    );
    if (!spoken) return "abandoned";
    const { kind, text } = spoken;
    const within =
      kind === "deliver"
        ? this.voice.obligations.close(request.msg_id, crow, "answered")
        : this.declined(request, crow, onDecline);
    const posted = await this.voice.reply(
      nest,
      { author: crow, kind, text, to: request.author, refers_to: request.msg_id },
      { within },
    );
    // Quarantined between its claim and its deliver (the Sentry flagged the claim): the work is withheld.
    if (posted === "quarantined") return this.declineQuarantined(nest, crow, request, onDecline);
    if (posted === "dropped") return "abandoned";
    return kind === "deliver" ? "answered" : "declined";
  }

  /** The loop's decline for a crow that cannot answer because it is quarantined; no model call. */
  private async declineQuarantined(
    nest: NestRecord,
    crow: string,
    request: MessageRecord,
    onDecline: OnDecline = "close",
  ): Promise<Turn> {
    const text = `I can't take this one: ${crow} is quarantined pending the owner's decision.`;
    const within = this.declined(request, crow, onDecline);
    const posted = await this.voice.reply(
      nest,
      { author: crow, kind: "decline", text, to: request.author, refers_to: request.msg_id },
      { quarantineDecline: true, within },
    );
    return posted === "posted" ? "declined" : "abandoned";
  }

  /** A decline's write on the obligation: it closes it, or hands it on to the room's next crow. */
  private declined(request: MessageRecord, crow: string, onDecline: OnDecline): Within {
    return onDecline === "handOn"
      ? this.voice.obligations.handOn(request.msg_id, crow)
      : this.voice.obligations.close(request.msg_id, crow, "declined");
  }

  private async personaOf(crow: string): Promise<string> {
    if (ROSTER.includes(crow) || personaOf(crow)) return crow;
    return (await this.voice.deps.registry.get(crow))?.persona ?? "Corvina";
  }
}
