// The results of a projected subscription, pulled from its source event stream.
import { GraphQLError, type ExecutionResult, type OperationDefinitionNode } from "graphql";
import type { Projector } from "./compile.ts";
import { ProjectedPage, ProjectedResult } from "./results.ts";

/** A source that can hand on every event it has in hand (schema/follow.ts pagedFollow). */
export interface PagedSource extends AsyncIterator<unknown> {
  nextPage(): Promise<IteratorResult<unknown[]>>;
}

/**
 * The results of a projected subscription: each event written by the projector, or executed. For a
 * page writer over a paged source, every event in hand that projects goes out as one ProjectedPage;
 * an event that does not is executed and handed on alone, in its place.
 */
export class ProjectedStream implements AsyncIterableIterator<ExecutionResult> {
  /** Events taken from a page but not yet handed on. */
  private held: unknown[] = [];

  constructor(
    private readonly source: AsyncIterator<unknown>,
    private readonly project: Projector,
    private readonly executeOne: (payload: unknown) => ExecutionResult | Promise<ExecutionResult>,
    private readonly operation: OperationDefinitionNode,
    private readonly paged: PagedSource | undefined,
  ) {}

  async next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.paged) return this.nextOfPage(this.paged);
    const step = await this.pull(() => this.source.next());
    if (step.done) return { done: true, value: undefined };
    const text = this.project(step.value);
    return { done: false, value: text !== undefined ? new ProjectedResult(text) : await this.executeOne(step.value) };
  }

  private async nextOfPage(paged: PagedSource): Promise<IteratorResult<ExecutionResult>> {
    if (this.held.length === 0) {
      const step = await this.pull(() => paged.nextPage());
      if (step.done) return { done: true, value: undefined };
      this.held = step.value;
      if (this.held.length === 0) return this.nextOfPage(paged);
    }
    const texts: string[] = [];
    let taken = 0;
    for (; taken < this.held.length; taken++) {
      const text = this.project(this.held[taken]);
      if (text === undefined) break;
      texts.push(text);
    }
    if (taken > 0) {
      this.held = taken === this.held.length ? [] : this.held.slice(taken);
      return { done: false, value: new ProjectedPage(texts) };
    }
    const [first, ...rest] = this.held;
    this.held = rest;
    return { done: false, value: await this.executeOne(first) };
  }

  private async pull<R>(step: () => Promise<R>): Promise<R> {
    try {
      return await step();
    } catch (error) {
      // As graphql-tools' subscribe reports a failing source.
      throw new GraphQLError((error as Error)?.message ?? String(error), {
        originalError: error as Error,
        nodes: [this.operation],
      });
    }
  }

  async return(value?: unknown): Promise<IteratorResult<ExecutionResult>> {
    await this.source.return?.(value);
    return { done: true, value: undefined };
  }

  async throw(error?: unknown): Promise<IteratorResult<ExecutionResult>> {
    if (this.source.throw) await this.source.throw(error);
    else await this.source.return?.();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
