/** A clock whose time moves only when the test advances it; timers fire in order. */
import type { Clock } from '../../operator/kube/clock.js';

export class FakeClock implements Clock {
  private ms = 1_000_000;
  private nextId = 1;
  private readonly timers = new Map<number, { at: number; callback: () => void }>();

  now(): Date {
    return new Date(this.ms);
  }
  monotonic(): number {
    return this.ms;
  }
  setTimeout(callback: () => void, ms: number): unknown {
    const id = this.nextId++;
    this.timers.set(id, { at: this.ms + ms, callback });
    return id;
  }
  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** How many timers are pending. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers and letting their promises settle. */
  async advance(ms: number): Promise<void> {
    const end = this.ms + ms;
    for (;;) {
      await settle();
      const due = [...this.timers.entries()]
        .filter(([, timer]) => timer.at <= end)
        .sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.timers.delete(due[0]);
      this.ms = Math.max(this.ms, due[1].at);
      due[1].callback();
    }
    this.ms = end;
    await settle();
  }
}

/** Lets pending promise callbacks and immediates run. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise<void>((done) => setImmediate(done));
}
