// Injected time (conventions: inject time, randomness and transports). Everything that waits
// for a moment of the service's own time (job due times, retry schedules, attempt deadlines)
// asks the clock for a timer, so a test with a ManualClock (testing/manual-clock.ts) moves a day
// in one line and sees exactly what would have happened, instead of sleeping.
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Unix ms. */
  now(): number;
  /** Calls `fn` once `ms` of this clock's time have passed. Never holds the process open. */
  setTimer(fn: () => void, ms: number): Timer;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** The system clock moved by a fixed offset (tests that need "a month later" and real timers). */
export function offsetClock(offsetMs: () => number): Clock {
  return { now: () => Date.now() + offsetMs(), setTimer: systemClock.setTimer };
}
