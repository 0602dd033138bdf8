// The embedded offline brain (docs/flock.md §8): a small deterministic program, not a language
// model. It reads the structured input of a request (never the English prompt), follows each
// role's output format exactly (docs/models.md), labels what it says as offline, and reports token
// counts estimated from text length so budgets behave as they would with a real provider.
import { triageItem } from "./heuristics.ts";
import type {
  BanterInput,
  BossInput,
  CrowInput,
  ElderInput,
  Model,
  ModelReply,
  ModelRequest,
  QuillInput,
} from "./model.ts";
import { lensAngle, WORKER_PERSONA_NAMES } from "./prompts.ts";
import { clip } from "../base/util/clip.ts";
import { offlineToolCalls, offlineToolSummary } from "./offline-tools.ts";

export const OFFLINE_MODEL_NAME = "offline:brain-1";
export const OFFLINE_LABEL = "[offline] ";

/** Roughly four characters a token, the usual rule of thumb for English. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** FNV-1a: a stable 32-bit hash, so the same speaker and input always pick the same phrasing. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function pick<T>(options: readonly T[], seed: number): T {
  return options[seed % options.length]!;
}

/** How each working persona opens and closes an answer: its voice, in a few fixed phrases. */
const VOICES: Record<string, { openers: readonly string[]; closers: readonly string[] }> = {
  Hugin: {
    openers: ["Quick flight over this.", "Back from a first pass."],
    closers: ["Source: my own notes, no lookups made; check before you rely on it."],
  },
  Munin: {
    openers: ["In order, then.", "Here are the steps, as promised."],
    closers: ["I will remember the deadline if you give me one."],
  },
  Pepper: {
    openers: ["Here's the hook:", "Let's open strong:"],
    closers: ["Sable will want to cut it, and Sable may be right."],
  },
  Inky: {
    openers: ["Input, output, edge cases.", "Small and testable:"],
    closers: ["Edge case to watch: the empty input."],
  },
  Sable: { openers: ["Cut to the bone:", "Plainly:"], closers: ["Nothing else earns its place."] },
  Rook: {
    openers: ["Right, practical bits.", "Sorted as far as I can:"],
    closers: ["Still to do: the part only you can do in person."],
  },
  Jackdaw: {
    openers: ["Found a few useful bits!", "Ooh, got something for this."],
    closers: ["Worth keeping the receipt, just in case."],
  },
  Corvina: {
    openers: ["An odd one; here is how I see it.", "Taking this one gently."],
    closers: ["Happy to take another pass if it needs one."],
  },
};

/** What the work looks like, by task type; the focus is the task or the crow's subtask. */
function workSteps(taskType: string, focus: string): string {
  const f = `"${clip(focus, 80)}"`;
  switch (taskType) {
    case "research":
      return `For ${f}: list the questions, check two independent sources for each, note where every fact came from.`;
    case "writing":
      return `For ${f}: a one-line hook, three short paragraphs on the point, a clear ask at the end.`;
    case "code":
      return `For ${f}: one small function, its inputs and outputs named, a test for the normal case and the empty case.`;
    case "planning":
      return `For ${f}: 1. set the goal and date, 2. list the steps in order, 3. book the first step today.`;
    case "errand":
      return `For ${f}: find where and when, go or call once, confirm it is done and keep proof.`;
    default:
      return `For ${f}: work out what done looks like, take the smallest step toward it, report back.`;
  }
}

function crowAnswer(speaker: string, persona: string, input: CrowInput, seed: number): string {
  const voice = VOICES[persona] ?? VOICES.Corvina!;
  const focus = input.subtask ?? input.task;
  const parts = [pick(voice.openers, seed)];
  if (input.lens) parts.push(`Take ${input.lens.index + 1} of ${input.lens.of}, ${lensAngle(input.lens.index)}.`);
  if (input.rework)
    parts.push(input.rework.reason ? `Reworked, as asked: "${clip(input.rework.reason, 80)}".` : "Reworked, as asked.");
  parts.push(workSteps(input.taskType, focus));
  parts.push(pick(voice.closers, seed >>> 8));
  const signature = speaker === persona ? "" : ` (${speaker})`;
  return `${OFFLINE_LABEL}${parts.join(" ")}${signature}`;
}

function withoutLabel(answer: string): string {
  return answer.startsWith(OFFLINE_LABEL) ? answer.slice(OFFLINE_LABEL.length) : answer;
}

function elderAnswer(input: ElderInput): string {
  const lines = input.partials.map((partial) => {
    const what = partial.subtask ? `took "${clip(partial.subtask, 60)}"` : "gave a take";
    return `${partial.crow} ${what}: ${clip(withoutLabel(partial.answer), 140)}`;
  });
  const closing =
    input.mode === "split"
      ? "Together these cover every part of the item."
      : "The takes differ in emphasis rather than substance; start with the first and borrow from the others.";
  return `${OFFLINE_LABEL}Merged answer for "${clip(input.task, 80)}":\n${lines.join("\n")}\n${closing}`;
}

/** A persona's habitual aside, so banter sounds like its speaker. */
const QUIPS: Record<string, string> = {
  Hugin: "I have a source for that, naturally.",
  Munin: "I wrote it down, in case anyone forgets.",
  Pepper: "What a headline that would make.",
  Inky: "Logged, tested, shipped.",
  Sable: "Fewer words next time.",
  Rook: "Back before dark, as ever.",
  Jackdaw: "Found a button on the way, by the way.",
  Corvina: "Odd jobs are the best jobs.",
};

function banterLine(speaker: string, persona: string, input: BanterInput, seed: number): string {
  const latest = input.recent.length > 0 ? clip(input.recent[input.recent.length - 1]!, 60) : "";
  const aboutEvent = latest ? `after "${latest}"` : "after that flight";
  const templates = [
    `${input.to}, ${aboutEvent}, I'd call us even.`,
    `${input.to}, ${aboutEvent}, you owe me a shiny thing.`,
    `${input.to}, ${aboutEvent}, same time tomorrow?`,
    `${input.to}, ${aboutEvent}, I'm telling the Elder it was my idea.`,
  ];
  // The relationship colours the line only when the backstories actually tie the pair together.
  const tied = input.relationship.includes(speaker) || input.relationship.includes(input.to);
  const colour = tied ? " Some things never change between us." : "";
  const quip = QUIPS[persona] ?? QUIPS.Corvina!;
  return `${OFFLINE_LABEL}${pick(templates, seed)}${colour} ${quip}`.replace(/[\r\n]+/g, " ");
}

const WORK_WORDS = /\b(please|can you|could you|would you|ask|tell|have)\b/i;

function namesInOrder(text: string, names: readonly string[]): string[] {
  return names
    .map((name) => ({ name, at: text.search(new RegExp(`\\b${escapeRegExp(name)}\\b`, "i")) }))
    .filter((found) => found.at >= 0)
    .sort((a, b) => a.at - b.at)
    .map((found) => found.name);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** "Pepper, please draft X" / "ask Pepper to draft X" / "@Pepper draft X" -> "draft X". */
function requestFor(text: string, name: string): string {
  const n = escapeRegExp(name);
  const stripped = text
    .replace(
      new RegExp(`^\\s*(?:quill[,:]?\\s*)?(?:please\\s+)?(?:ask|tell|have|get)\\s+@?${n}\\s+(?:to\\s+)?`, "i"),
      "",
    )
    .replace(new RegExp(`^\\s*@?${n}\\s*[,:]?\\s*`, "i"), "")
    .replace(/^(?:please|can you|could you|would you)\s+/i, "")
    .replace(/\?\s*$/, "")
    .trim();
  return stripped.length > 0 ? stripped : text.trim();
}

function quillReply(input: QuillInput, seed: number): string {
  const knownCrows = [...new Set([...WORKER_PERSONA_NAMES, ...input.members])];
  const named = namesInOrder(input.text, knownCrows);
  const first = named[0];
  if (
    first !== undefined &&
    (WORK_WORDS.test(input.text) || new RegExp(`^\\s*@?${escapeRegExp(first)}\\b`, "i").test(input.text))
  ) {
    if (input.members.includes(first)) {
      return `RELAY ${JSON.stringify({ to: first, text: requestFor(input.text, first) })}`;
    }
    return `SAY ${OFFLINE_LABEL}I can't pass this to ${first}: ${first} is not in this nest. Members here: ${input.members.join(", ") || "none"}.`;
  }
  const openers = [`Of course, ${input.requester}.`, `Happy to help, ${input.requester}.`];
  return `${OFFLINE_LABEL}${pick(openers, seed)} On "${clip(input.text, 100)}": ${workSteps("other", input.text).replace(/^For "[^"]*": /, "")}`;
}

const NAME = "([A-Za-z][A-Za-z0-9_-]{0,39})";

function bossReply(input: BossInput): string {
  const text = input.text;
  const personas = input.personas.length > 0 ? input.personas : WORKER_PERSONA_NAMES;
  if (/\b(nest|room)\b/i.test(text) && /\b(create|make|set up|open|start|build|new)\b/i.test(text)) {
    const quoted = /["“']([^"”']{1,40})["”']/.exec(text)?.[1];
    const called = /\b(?:named|called)\s+(.+?)(?=\s+(?:with|for|using|containing)\b|[,.;]|$)/i.exec(text)?.[1];
    const name = (quoted ?? called)?.trim();
    const crows = namesInOrder(text, [...personas, ...input.registry]).filter((crow) => crow !== name);
    if (!name) return `${OFFLINE_LABEL}Boss here: a nest needs a name. Say "create a nest named <name> with <crows>".`;
    if (crows.length === 0) return `${OFFLINE_LABEL}Boss here: which crows go in "${name}"? Name at least one.`;
    return `NEST ${JSON.stringify({ name, crows })}`;
  }
  if (
    /\b(spin up|spin|hire|recruit|create|make|add|new)\b/i.test(text) &&
    /\bcrow\b|\bspin up\b|\bhire\b|\brecruit\b/i.test(text)
  ) {
    const name =
      new RegExp(`\\b(?:named|called|name it)\\s+["']?${NAME}`, "i").exec(text)?.[1] ??
      new RegExp(`\\b(?:spin up|hire|recruit)\\s+(?!a\\b|an\\b|the\\b|new\\b|another\\b)${NAME}`, "i").exec(text)?.[1];
    if (!name) return `${OFFLINE_LABEL}Boss here: give the new crow a name and I'll put it on the roster.`;
    const persona =
      namesInOrder(text, personas).find((candidate) => candidate.toLowerCase() !== name.toLowerCase()) ?? "Corvina";
    const trust = /\bregular\b/i.test(text) ? "regular" : "stranger";
    return `SPIN ${JSON.stringify({ name, persona, trust })}`;
  }
  return `${OFFLINE_LABEL}Boss here, ${input.requester}: I staff crows and nests. Ask me to spin up a crow or create a nest.`;
}

/** The offline answer, handed to a listening flight in a few word-aligned chunks, as a provider streams. */
export function streamInChunks(text: string, deliver: (delta: string, first: boolean) => void, chunks = 4): void {
  const size = Math.ceil(text.length / chunks);
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const space = text.indexOf(" ", end);
    if (end < text.length && space > 0 && space - end < 24) end = space + 1;
    deliver(text.slice(start, end), start === 0);
    start = end;
  }
}

export class OfflineBrain implements Model {
  readonly name = OFFLINE_MODEL_NAME;

  async generate(request: ModelRequest): Promise<ModelReply> {
    if (request.signal?.aborted) throw new Error("aborted");
    if (request.role === "crow" && request.tools) {
      const calls = offlineToolCalls(request.input.task, request.tools);
      if (calls.length > 0) {
        const usage = { inputTokens: estimateTokens(request.system + request.prompt), outputTokens: 8 };
        return { text: "", usage, model: OFFLINE_MODEL_NAME, toolCalls: calls };
      }
    }
    let text = this.answer(request);
    const summary = request.role === "crow" && request.tools ? offlineToolSummary(request.tools) : "";
    if (summary) text = `${text}\n\n${summary}`;
    if (request.watch?.text && (request.role === "crow" || request.role === "elder"))
      streamInChunks(text, request.watch.text);
    return {
      text,
      usage: { inputTokens: estimateTokens(request.system + request.prompt), outputTokens: estimateTokens(text) },
      model: OFFLINE_MODEL_NAME,
    };
  }

  private answer(request: ModelRequest): string {
    const seed = hash(`${request.speaker}\u0000${JSON.stringify(request.input)}`);
    switch (request.role) {
      case "sentry": {
        const { item, hints, rework } = request.input;
        // A rework follows a mode the owner's reason names (the offline brain reads no English but these).
        const asked = rework?.reason ? /\b(solo|split|murder)\b/i.exec(rework.reason)?.[1]?.toLowerCase() : undefined;
        const triage = triageItem(item, asked ? { ...hints, mode: asked } : hints);
        return JSON.stringify({ ...triage, reason: `${OFFLINE_LABEL}${triage.reason}` });
      }
      case "crow":
        return crowAnswer(request.speaker, request.persona, request.input, seed);
      case "elder":
        return elderAnswer(request.input);
      case "banter":
        return banterLine(request.speaker, request.persona, request.input, seed);
      case "quill":
        return quillReply(request.input, seed);
      case "boss":
        return bossReply(request.input);
    }
  }
}
