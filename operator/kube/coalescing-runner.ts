/**
 * Runs a reconcile one at a time. Requests that arrive while it runs (watch events, timers)
 * collapse into exactly one more run, so a burst of events never queues a burst of work.
 */
export class CoalescingRunner {
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly job: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs the job now, or once more right after the run in progress. */
  request(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop().finally(() => {
      this.running = undefined;
    });
  }

  /** Stops accepting requests and waits for the run in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async loop(): Promise<void> {
    do {
      this.again = false;
      try {
        await this.job();
      } catch (error) {
        this.onError(error);
      }
    } while (this.shouldRunAgain());
  }

  /** Read through a method: requests change these fields while the job awaits. */
  private shouldRunAgain(): boolean {
    return this.again && !this.stopped;
  }
}
