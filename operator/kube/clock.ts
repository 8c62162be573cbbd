/**
 * The one notion of time in the operator: every loop, timer and expiry reads it from here, so a
 * test can drive them all with one fake clock and the test harness can skew the wall clock
 * (certificates issued "in the future") without touching durations.
 */
export interface Clock {
  /** Wall-clock time: certificate validity, times written into objects for people to read. */
  now(): Date;
  /** Monotonic milliseconds, for every duration measured (unaffected by wall-clock steps). */
  monotonic(): number;
  /** `background`: the timer alone does not keep the process alive (held Events, the next audit). */
  setTimeout(callback: () => void, ms: number, background?: boolean): unknown;
  clearTimeout(handle: unknown): void;
}

export const systemClock: Clock = {
  now: () => new Date(),
  monotonic: () => performance.now(),
  setTimeout: (callback, ms, background = false) => {
    const timer = setTimeout(callback, ms);
    if (background) timer.unref();
    return timer;
  },
  clearTimeout: (handle) => {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** The system clock with its wall time taken from `now` (a skewed clock); durations stay real. */
export function withWallTime(now: () => Date): Clock {
  return { ...systemClock, now };
}
