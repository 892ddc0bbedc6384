// What a starting server has opened, closed in reverse order when it stops or when a later step
// of its start fails (server.ts): each step pushes its own closing as it opens something.
export class Cleanup {
  private readonly steps: Array<() => Promise<void>> = [];
  private closing: Promise<void> | undefined;

  /** Closed before everything pushed earlier. */
  push(step: () => Promise<void>): void {
    this.steps.unshift(step);
  }

  /** Runs every step once, newest first; a failing step does not stop the others. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const step of this.steps) await step().catch(() => undefined);
    })();
    return this.closing;
  }
}
