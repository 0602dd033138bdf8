// The results a projected subscription hands on: one event's JSON text, or a page of them.
import type { ExecutionResult } from "graphql";

/**
 * A result whose JSON text is already written. Yoga's SSE writer calls `stringify` (its hook for
 * pre-serialized results); anything else that reads it (`data`, JSON.stringify) gets the same value.
 */
export class ProjectedResult implements ExecutionResult {
  constructor(readonly text: string) {}
  get data(): Record<string, unknown> {
    return (JSON.parse(this.text) as { data: Record<string, unknown> }).data;
  }
  /** Yoga calls it unbound, with the result as its argument. */
  stringify(result: ProjectedResult): string {
    return result.text;
  }
  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}

/** The result's JSON text as Yoga and graphql-sse would write it, for a projected result without work. */
export function projectedText(result: unknown): string | undefined {
  return result instanceof ProjectedResult ? result.text : undefined;
}

/**
 * Several projected results in one: handed only to a writer that said it takes them (WRITES_PAGES
 * in its context), which writes each text as its own frame. A replay's page of events then passes
 * graphql's per-result machinery (envelop's hooks, the iterator) once, not once per event.
 */
export class ProjectedPage implements ExecutionResult {
  declare readonly errors?: undefined; // never has any: envelop's hooks (masking) pass it on as it is
  constructor(readonly texts: readonly string[]) {}
}

/** Set in the initial context by a transport that writes ProjectedPage results (src/server/graphql/subscriptions.ts). */
export const WRITES_PAGES = Symbol("writes projected pages");
