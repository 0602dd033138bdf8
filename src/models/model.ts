// One interface for every voice in the flock: the Sentry, the crows, the Elder, Quill, Boss and
// banter. A request carries both a rendered prompt (for real providers) and the structured input
// it was rendered from (for the offline brain, which is a small deterministic program, not a
// reader of English). Every reply reports its token counts.

export type Role = "sentry" | "crow" | "elder" | "quill" | "boss" | "banter";

export interface SentryInput {
  item: string;
  /** What the classifier thought of the item, only what it was sure of (src/flock/triage.ts classifierHints); may be absent. */
  hints?: { taskType?: string; mode?: string };
  /** A rework the owner asked for: the triage they rejected, and their reason (null: none given). */
  rework?: {
    previous: { mode: string; task_type: string; subtasks: string[]; reason: string };
    reason: string | null;
  };
}
export interface CrowInput {
  task: string;
  /** The subtask this crow takes when the item was split; the whole task otherwise. */
  subtask?: string;
  /** In a murder: which of the N crows this is (distinct lenses). */
  lens?: { index: number; of: number };
  taskType: string;
  /** A rework the owner asked for: the answer they rejected, and their reason (null: none given). */
  rework?: { previous: string; reason: string | null };
}
export interface ElderInput {
  task: string;
  mode: "split" | "murder";
  partials: Array<{ crow: string; subtask?: string; answer: string }>;
}
export interface BanterInput {
  speaker: string;
  to: string;
  speakerBackstory: string;
  toBackstory: string;
  relationship: string;
  /** One line per recent flock event, newest last. */
  recent: string[];
}
export interface QuillInput {
  requester: string;
  text: string;
  /** Members of the nest Quill may relay to. */
  members: string[];
}
export interface BossInput {
  requester: string;
  text: string;
  personas: string[];
  registry: string[];
  nests: string[];
}

export type RoleInput =
  | { role: "sentry"; input: SentryInput }
  | { role: "crow"; input: CrowInput }
  | { role: "elder"; input: ElderInput }
  | { role: "banter"; input: BanterInput }
  | { role: "quill"; input: QuillInput }
  | { role: "boss"; input: BossInput };

export type ModelRequest = RoleInput & {
  /** Who speaks: a persona or spun-crow name ("Sentry", "Pepper", ...). */
  speaker: string;
  /** The persona whose habits the speaker runs on (a spun crow's backing persona). */
  persona: string;
  system: string;
  prompt: string;
  /** Ask the provider for JSON (the Sentry's triage, Boss's orders). */
  json?: boolean;
  signal?: AbortSignal;
  /** Whose turn this call takes in the provider's fair queue: the list (or nest) it serves. */
  lane?: string;
  /** The flight's hooks: its stored patience, its waits, its text as it streams. */
  watch?: FlightWatch;
  /** A crow's flight with tools (docs/tools.md): what it is offered, and its steps so far. */
  tools?: ToolTurn;
};

/** A tool as the model is offered it: `name` is unique within the flight (the server's prefix and the tool's name). */
export interface ToolOffer {
  name: string;
  /** The tool's own name on its server (the offline brain picks by it). */
  tool: string;
  description: string;
  /** Its arguments' JSON Schema, exactly as the server gave it. */
  inputSchema: Record<string, unknown>;
  readOnly: boolean;
}

/** A call the model asks for: its own id, the offered name, the arguments. */
export interface ToolCallRequest {
  id: string;
  name: string;
  args: Record<string, unknown>;
}

/** One earlier model call of the flight: the text it wrote, the calls it asked and what each returned (as the model reads it). */
export interface ToolStepRecord {
  text: string;
  calls: Array<ToolCallRequest & { result: string }>;
}

export interface ToolTurn {
  offered: ToolOffer[];
  /** The flight's last allowed step: the tools stay declared, but the model must answer in words. */
  final: boolean;
  steps: ToolStepRecord[];
}

/** What a flight hears of its call while the provider makes it wait, and of the text as it comes. */
export interface FlightWatch {
  /** The patience deadline (ms since the epoch): the stored one if an earlier wait set it, else now + patienceMs, stored. */
  deadline(now: number, patienceMs: number): Promise<number>;
  /** The call waits on the provider: why, when the next try goes out, when the patience ends. */
  waiting?(notice: { reason: string; retryAt: number; deadline: number }): void;
  /** A try went out again after a wait. */
  resumed?(): void;
  /** A piece of the answer as the provider streams it (a view: never stored); `first` starts a try's text afresh. */
  text?(delta: string, first: boolean): void;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelReply {
  text: string;
  usage: Usage;
  /** e.g. "offline:brain-1" or "openai:gpt-4o-mini". */
  model: string;
  /** The calls a flight with tools asked for (then `text` may be empty). */
  toolCalls?: ToolCallRequest[];
}

export interface Model {
  readonly name: string;
  /** Rejects with an Error whose message is safe to show (no keys, no prompts). */
  generate(request: ModelRequest): Promise<ModelReply>;
}

export function totalTokens(usage: Usage): number {
  return usage.inputTokens + usage.outputTokens;
}
