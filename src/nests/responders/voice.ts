// The voice every responder of the must-respond loop speaks with (it was called Loop, though it
// loops over nothing): the one way a loop reply is posted (its kind is the loop's, it is
// not rate-limited) and speak(), the model call with its fallback line (docs/nests-chat.md "The
// must-respond loop").
import type { Model, RoleInput } from "../../models/model.ts";
import { renderRequest } from "../../models/prompts.ts";
import type { CrewPicker } from "../../flock/crew.ts";
import { safeMessage } from "../../flock/flights.ts";
import { StoppedError } from "../../flock/approvals.ts";
import { CrowsError, ForbiddenError } from "../../base/errors.ts";
import type { CrowRegistry } from "../registry.ts";
import type { NestRecord, NestStore } from "../store.ts";
import type { InternalPost, NestChat } from "../chat.ts";
import type { Obligations } from "../obligations/index.ts";
import type { NestCrowTools, NestToolTurn } from "./crow-tools.ts";

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
export type Posted = "posted" | "quarantined" | "dropped";
export type Within = NonNullable<InternalPost["within"]>;

export interface ReplyOptions {
  callsForResponse?: boolean;
  quarantineDecline?: boolean;
  within?: Within;
}

export interface RespondersDeps {
  model: Model;
  picker: CrewPicker;
  registry: CrowRegistry;
  nests: NestStore;
  obligations: Obligations;
  logLine: (line: string) => void;
  /** The nest's tools for a crow answering a request (docs/tools.md); absent: no tools, as ever. */
  tools?: NestCrowTools;
}

/** Who speaks in a model call: the speaker's name and the persona it runs on. */
export interface Speaker {
  speaker: string;
  /** A name, or a lookup (a spun crow's backing persona); a failed lookup falls back like the call. */
  persona: string | (() => Promise<string>);
}

/** speak(): a role's model call; reply(): its post. */
export class ResponderVoice {
  constructor(
    readonly chat: NestChat,
    readonly deps: RespondersDeps,
  ) {}

  get obligations(): Obligations {
    return this.deps.obligations;
  }

  /**
   * One model call for a role's reply: `read` makes the reply of the model's text; when the call or
   * `read` fails, `fallback(reason)` is the reply. Undefined when the server is stopping, or the
   * turn stepped down (another instance took its obligation over, crow-tools.ts): no reply.
   * With `tools` (a crow's turn at a request), the nest's tools are offered through the tool loop.
   */
  async speak<T>(
    role: RoleInput,
    who: Speaker,
    read: (text: string) => T | Promise<T>,
    fallback: (reason: string) => T,
    tools?: NestToolTurn,
  ): Promise<T | undefined> {
    try {
      const persona = typeof who.persona === "string" ? who.persona : await who.persona();
      const request = renderRequest({ ...role, speaker: who.speaker, persona, signal: this.chat.signal });
      // A crow answering a request may use its nest's tools: the list flights' tool loop, its rules.
      const looped = tools && this.deps.tools ? await this.deps.tools.answer(tools, request) : null;
      if (looped) return looped.ok ? await read(looped.text) : fallback(looped.error ?? "error");
      const answer = await this.deps.model.generate(request);
      return await read(answer.text);
    } catch (error) {
      if (this.chat.signal.aborted || error instanceof StoppedError) return undefined;
      return fallback(safeMessage(error));
    }
  }

  /**
   * Posts one reply of the loop's through the one posting path. Its kind is the loop's (tagged_by
   * "harness", the server; Jev is asked only for calibration) and it is not rate-limited: the loop bounds it to
   * one per request. A reply never calls for another, except Quill's relay (`callsForResponse`).
   * A guardrail's refusal (403, 400, ...) ends this reply, logged; so does a refusal from `within`
   * (the obligation is no longer this reply's to close: another answer got there first).
   */
  async reply(nest: NestRecord, reply: LoopReply, options: ReplyOptions = {}): Promise<Posted> {
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
}
