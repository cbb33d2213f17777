/**
 * A job a service runs on a timer, never two runs of it at once: the periodic sync of remote MCP servers, the
 * audit log's pruning. A run asked for while one is under way is skipped (the next tick catches up), and a
 * failed run is handed to `onError` rather than left as an unhandled rejection. The timers do not keep the
 * process alive.
 */
export class PeriodicJob<T> {
  private timer?: NodeJS.Timeout;
  private running = false;

  constructor(
    private readonly work: () => Promise<T>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs every `intervalMs`, the first time after `firstMs` (one interval unless given). */
  start(intervalMs: number, firstMs = intervalMs): void {
    this.stop();
    this.timer = setTimeout(() => {
      void this.tick();
      this.timer = setInterval(() => void this.tick(), intervalMs).unref();
    }, firstMs).unref();
  }

  stop(): void {
    // One timer at a time: the first timeout, then the interval (clearTimeout clears either).
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One run now, unless one is under way (then undefined); a failure rejects. */
  async run(): Promise<T | undefined> {
    if (this.running) {
      return undefined;
    }
    this.running = true;
    try {
      return await this.work();
    } finally {
      this.running = false;
    }
  }

  private async tick(): Promise<void> {
    try {
      await this.run();
    } catch (error) {
      this.onError(error);
    }
  }
}
