// A list's live state folded from its listEvents, one event at a time (lists.tsx renders it):
// items and their stages, flights, verdicts, banter, pranks, tokens and "finished". No JSX: the
// fold is plain data, apart from the view that shows it.
export interface ListEvent {
  seq: number;
  name: string;
  ts: string;
  payload: any;
}

export interface Flight {
  crow: string;
  borrowed: boolean;
  /** When it took off and landed (the events' ts): the flight's latency as the owner sees it. */
  flewAt?: string;
  landed?: { ok: boolean; tokens: number; error?: string; at?: string };
}

export interface ItemState {
  id: string;
  text: string;
  stage: string;
  mode?: string;
  taskType?: string;
  subtasks: string[];
  reason?: string;
  answer?: string;
  crows: string[];
  flights: Flight[];
  verdicts: Array<{ target: string; verdict: string }>;
}

export interface ListState {
  events: ListEvent[];
  items: ItemState[];
  banter: Array<{ seq: number; crow: string; to: string; text: string }>;
  pranks: string[];
  tokens: number;
  budget?: number;
  finished: boolean;
}

export const EMPTY: ListState = { events: [], items: [], banter: [], pranks: [], tokens: 0, finished: false };

/**
 * Where a verdict leaves an item: an approved (or auto) output is done, a rejected one or a
 * timeout ends it with that word; a triage approved goes to work, a rejected one waits for the
 * item.skipped that follows. Any other value (a later docs/contract.md value) is shown as it is.
 */
export function stageAfterVerdict(target: string, verdict: string, stage: string): string {
  if (target === "output") {
    if (verdict === "approved" || verdict === "auto") return "done";
    if (verdict === "rejected") return "rejected";
    if (verdict === "timeout") return "timed out (rejected)";
    return `output ${verdict}`;
  }
  if (verdict === "approved" || verdict === "auto") return "working";
  if (verdict === "rejected") return "triage rejected";
  if (verdict === "timeout") return "triage timed out";
  return stage;
}

export function reduce(state: ListState, event: ListEvent): ListState {
  const p = event.payload ?? {};
  const items = state.items.map((i) =>
    i.id === p.item_id ? { ...i, flights: [...i.flights], verdicts: [...i.verdicts] } : i,
  );
  const item = items.find((i) => i.id === p.item_id);
  const next: ListState = { ...state, events: [...state.events, event], items };
  switch (event.name) {
    case "list.started":
      next.items = (p.items ?? []).map((i: { item_id: string; text: string }) => ({
        id: i.item_id,
        text: i.text,
        stage: "pending",
        subtasks: [],
        crows: [],
        flights: [],
        verdicts: [],
      }));
      break;
    case "item.triaged":
      if (item)
        Object.assign(item, {
          mode: p.mode,
          taskType: p.task_type,
          subtasks: p.subtasks ?? [],
          reason: p.reason,
          stage: p.needs_approval ? "awaiting triage" : "working",
        });
      break;
    case "crow.flying":
      if (item) {
        item.flights.push({ crow: p.crow, borrowed: !!p.borrowed, flewAt: event.ts });
        if (item.stage === "pending" || item.stage === "awaiting triage") item.stage = "working";
      }
      break;
    case "crow.landed":
      if (item) {
        const flight = [...item.flights].reverse().find((f) => f.crow === p.crow && !f.landed);
        const landed = { ok: !!p.ok, tokens: p.tokens ?? 0, error: p.error, at: event.ts };
        if (flight) flight.landed = { ...landed };
        else item.flights.push({ crow: p.crow, borrowed: false, landed });
      }
      next.tokens += p.tokens ?? 0;
      break;
    case "item.answered":
      if (item)
        Object.assign(item, {
          answer: p.answer,
          crows: p.crows ?? [],
          stage: p.needs_approval ? "awaiting output" : "done",
        });
      break;
    case "verdict":
      if (item) {
        // An edited approval (docs/rules.md "Edits"): the work follows the owner's triage, and the
        // owner's text is the answer.
        const after = p.edited?.after;
        if (after?.answer !== undefined) item.answer = after.answer;
        if (after?.mode !== undefined)
          Object.assign(item, { mode: after.mode, taskType: after.task_type, subtasks: after.subtasks ?? [] });
        item.verdicts.push({ target: p.target, verdict: p.verdict });
        item.stage = stageAfterVerdict(p.target, p.verdict, item.stage);
      }
      break;
    case "item.skipped":
      if (item) item.stage = `skipped (${p.reason})`;
      break;
    case "crow.banter":
      next.banter = [...state.banter, { seq: event.seq, crow: p.crow, to: p.to, text: p.text }];
      break;
    case "requester.pranked":
      next.pranks = [...state.pranks, p.message];
      break;
    case "list.finished":
      next.finished = true;
      next.tokens = p.tokens_used ?? next.tokens;
      next.budget = p.token_budget ?? next.budget;
      break;
  }
  return next;
}
