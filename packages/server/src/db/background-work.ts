// Which work is the node's own background: applying what its boxes report (presence, state,
// events; box-link/gateway.ts). SQLite's one connection serves the API's requests before it
// (fifo-sqlite-dialect.ts), so a fleet coming back at once does not put its thousands of
// statements ahead of a user's call (docs/architecture.md, "SQLite under a storm").
//
// AsyncLocalStorage carries the mark through every await of that work, down to the driver,
// without threading a flag through each repository the work calls.
import { AsyncLocalStorage } from 'node:async_hooks';

const lane = new AsyncLocalStorage<true>();

/** Runs `work` (and everything it awaits or starts) as background work. */
export function asBackground<T>(work: () => T): T {
  return lane.run(true, work);
}

/** Whether the caller runs inside asBackground(). */
export function isBackground(): boolean {
  return lane.getStore() === true;
}
