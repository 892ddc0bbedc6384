/** Injected time source (conventions: inject time, randomness and transports). */
export interface Clock { now(): number }
export const systemClock: Clock = { now: () => Date.now() };
