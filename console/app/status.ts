// What the owner must see about the console itself: errors (never swallowed) and each live
// stream's connection state. A tiny observable store, read by the header and the error panel.
export type StreamState = "connecting" | "live" | "reconnecting" | "stopped";

export interface ConsoleError {
  id: number;
  text: string;
  at: Date;
}

let errors: ConsoleError[] = [];
let streams = new Map<string, StreamState>();
let nextId = 1;
const listeners = new Set<() => void>();
const notify = () =>
  listeners.forEach((listener) => {
    listener();
  });

export function subscribeStatus(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export const currentErrors = () => errors;
export const currentStreams = () => streams;

export function reportError(text: string): void {
  errors = [...errors.slice(-9), { id: nextId++, text, at: new Date() }];
  notify();
}

export function dismissError(id: number): void {
  errors = errors.filter((e) => e.id !== id);
  notify();
}

export function setStreamState(name: string, state: StreamState | null): void {
  if (streams.get(name) === state) return;
  streams = new Map(streams);
  if (state === null) streams.delete(name);
  else streams.set(name, state);
  notify();
}

/** Runs an owner action, showing its failure instead of throwing it away. */
export async function attempt<T>(what: string, action: () => Promise<T>): Promise<T | undefined> {
  try {
    return await action();
  } catch (error) {
    reportError(`${what}: ${(error as Error).message}`);
    return undefined;
  }
}
