// Renders a role's structured input into the system and user prompts a real provider reads. The
// prompts are kept short on purpose: offline token counts are computed from their length and a
// list's budget (20,000 tokens by default) must carry a 20-item list of solo items with room to
// spare, so a Sentry call and a crow call each aim at roughly 250 tokens in and out.
import { personaOf, WORKERS, type Persona } from "../base/roster.ts";
import type { ModelRequest, RoleInput } from "./model.ts";

/** The angle each crow of a murder takes, by lens index; shared with the offline brain. */
export const LENS_ANGLES: readonly string[] = [
  "the practical, do-it-today take",
  "the careful take: risks and what could go wrong",
  "the bold, unconventional take",
  "the cheapest, simplest take",
  "the thorough take that leaves nothing out",
  "the owner's-eye take: what matters most to them",
  "the fastest take",
  "the long-term take",
];

export function lensAngle(index: number): string {
  const count = LENS_ANGLES.length;
  return LENS_ANGLES[((index % count) + count) % count]!;
}

/** The worker personas a Boss SPIN order may name. */
export const WORKER_PERSONA_NAMES: readonly string[] = WORKERS.map((p) => p.name);

type RenderArgs = RoleInput & { speaker: string; persona: string; signal?: AbortSignal };

export function renderRequest(args: RenderArgs): ModelRequest {
  const persona = personaOf(args.persona) ?? personaOf("Corvina")!;
  const { system, prompt } = renderRole(args, persona);
  const request: ModelRequest = {
    ...args,
    system,
    prompt,
    json: args.role === "sentry" || args.role === "boss",
  };
  if (args.signal === undefined) delete request.signal;
  return request;
}

/** A rework's instruction: the owner's reason in their words, or that they gave none. */
function ownerSentBack(reason: string | null): string {
  const why = reason ? `The owner's reason: ${reason}` : "The owner gave no reason.";
  return `The owner rejected that and asked for another try. ${why} Do it again, taking that into account.`;
}

function firstSentence(text: string): string {
  const match = /^.*?[.!?](?=\s|$)/.exec(text);
  return match ? match[0] : text;
}

/** Who is speaking: name, persona habits, voice and strength. Backstory only in full for banter. */
function identity(speaker: string, persona: Persona, fullBackstory: boolean): string {
  const backing = speaker === persona.name ? `${persona.epithet}` : `a crow running on ${persona.name}'s habits`;
  const backstory = fullBackstory ? persona.backstory : firstSentence(persona.backstory);
  return `You are ${speaker}, ${backing}. ${backstory} Voice: ${persona.voice}. Strength: ${persona.strength}.`;
}

function renderRole(args: RenderArgs, persona: Persona): { system: string; prompt: string } {
  const who = identity(args.speaker, persona, args.role === "banter");
  switch (args.role) {
    case "sentry": {
      const { item, hints, rework } = args.input;
      const system =
        `${who}\nTriage one todo item. Reply with JSON only: ` +
        `{"mode":"solo|split|murder","task_type":"research|writing|code|planning|errand|other","subtasks":[],"reason":"one line"}. ` +
        `split: the item joins 2-4 separate actions; subtasks names each. murder: it wants several takes ` +
        `(ideas, options, reviews, comparisons); subtasks []. Otherwise solo; subtasks [].`;
      const hintParts = [
        hints?.taskType ? `task_type=${hints.taskType}` : "",
        hints?.mode ? `mode=${hints.mode}` : "",
      ].filter(Boolean);
      const prompt = `Item: ${item}` + (hintParts.length > 0 ? `\nClassifier hint: ${hintParts.join(", ")}` : "");
      if (!rework) return { system, prompt };
      const p = rework.previous;
      const previous = `mode=${p.mode}, task_type=${p.task_type}, subtasks=${JSON.stringify(p.subtasks)}`;
      return { system, prompt: `${prompt}\nYou proposed: ${previous}.\n${ownerSentBack(rework.reason)}` };
    }
    case "crow": {
      const { task, subtask, lens, taskType, rework } = args.input;
      const system = `${who}\nDo the owner's task. Plain text in your voice, under 100 words, no preamble.`;
      const lines = [`Task (${taskType}): ${task}`];
      if (subtask !== undefined && subtask !== task) lines.push(`Your part of it: ${subtask}`);
      if (lens) lines.push(`You are take ${lens.index + 1} of ${lens.of}: give ${lensAngle(lens.index)}.`);
      if (rework) lines.push(`The flock's previous answer: ${rework.previous}`, ownerSentBack(rework.reason));
      return { system, prompt: lines.join("\n") };
    }
    case "elder": {
      const { task, mode, partials } = args.input;
      const how = mode === "split" ? "each crow did one part" : "each crow gave its own take";
      const system =
        `${who}\nMerge the crows' answers into one answer the owner can use (${how}). ` +
        `Name each crow's contribution, keep what agrees, state disagreements plainly. Plain text, under 150 words.`;
      const partialLines = partials.map((p) => `${p.crow}${p.subtask ? ` (${p.subtask})` : ""}: ${p.answer}`);
      return { system, prompt: [`Task: ${task}`, ...partialLines].join("\n") };
    }
    case "banter": {
      const { to, toBackstory, relationship, recent } = args.input;
      const system = `${who}\nWrite exactly one line (under 25 words) to ${to}, in your voice: a passing aside, not work. No quotes, no name prefix.`;
      const lines = [`${to}: ${firstSentence(toBackstory)}`, `Between you: ${relationship}`];
      if (recent.length > 0) lines.push(`Just now: ${recent.slice(-3).join(" | ")}`);
      return { system, prompt: lines.join("\n") };
    }
    case "quill": {
      const { requester, text, members } = args.input;
      const system =
        `${who}\nIf the text asks a named crow from Members to do work, reply exactly: RELAY {"to":"<crow>","text":"<the request to pass on>"}. ` +
        `If it asks a named crow that is not a member, reply: SAY <one line: you cannot relay to them here>. ` +
        `Otherwise answer helpfully in plain text.`;
      const prompt = `From: ${requester}\nMembers: ${members.join(", ") || "(none)"}\nText: ${text}`;
      return { system, prompt };
    }
    case "boss": {
      const { requester, text, personas, registry, nests } = args.input;
      const personaList = (personas.length > 0 ? personas : WORKER_PERSONA_NAMES).join("|");
      const system =
        `${who}\nReply with one line. To spin up a crow: SPIN {"name":"<name>","persona":"<${personaList}>","trust":"stranger|regular"} ` +
        `(default persona Corvina, trust stranger). To create a nest: NEST {"name":"<name>","crows":["<crow>"]}. ` +
        `Otherwise a short plain reply.`;
      const prompt = [
        `From: ${requester}`,
        `Spun crows: ${registry.join(", ") || "(none)"}`,
        `Nests: ${nests.join(", ") || "(none)"}`,
        `Text: ${text}`,
      ].join("\n");
      return { system, prompt };
    }
  }
}
