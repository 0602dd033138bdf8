// Calls that come in while one batch runs, run together as the next: a sender finishing sixteen
// sends in one turn records them in one transaction, not sixteen. Each caller gets its own result
// (or the batch's error). One batch runs at a time; the first call of an idle batcher waits one
// turn of the event loop (setImmediate) for company.

export class Batcher<Input, Output> {
  private waiting: Array<{ input: Input; resolve: (output: Output) => void; reject: (error: unknown) => void }> = [];
  private running = false;
  private scheduled = false;

  /** `run` answers one output per input, in order. */
  constructor(private readonly run: (inputs: Input[]) => Promise<Output[]>) {}

  add(input: Input): Promise<Output> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.running || this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    this.running = true;
    try {
      const outputs = await this.run(batch.map((call) => call.input));
      batch.forEach((call, i) => {
        call.resolve(outputs[i]!);
      });
    } catch (error) {
      for (const call of batch) call.reject(error);
    } finally {
      this.running = false;
      this.schedule();
    }
  }
}
