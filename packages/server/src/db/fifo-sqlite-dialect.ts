// Kysely's SQLite driver hands its one connection over with a mutex that wakes every waiter at
// each release (kysely 0.28, sqlite-driver.js `ConnectionMutex`: `while (promise) await promise`),
// so N statements waiting for the connection cost O(N²) wake-ups. boxhub issues thousands at
// once when a fleet comes back (a presence, a state and their checks per box), and that cost
// alone held the event loop for seconds (bench/README.md, "reconnect-storm"). This dialect puts
// a first-come-first-served gate in front of the driver: only the caller at the head of the line
// reaches Kysely's mutex, which is then never contended, and each release wakes one caller.
// The line has two lanes: the API's requests before the node's background work (FifoGate).
// Kysely's own driver does all the rest (transactions, savepoints, streaming).
import {
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  SqliteDialect,
  type SqliteDialectConfig,
  type TransactionSettings,
} from 'kysely';
import { BACKGROUND_TURN_MS } from '../loop-budget.ts';
import { isBackground } from './background-work.ts';

export interface FifoSqliteDialectConfig extends SqliteDialectConfig {
  /** FifoGate's budget for background work in one turn of the event loop (BACKGROUND_TURN_MS). */
  backgroundTurnMs?: number;
}

export class FifoSqliteDialect extends SqliteDialect {
  private readonly backgroundTurnMs: number;
  constructor(config: FifoSqliteDialectConfig) {
    super(config);
    this.backgroundTurnMs = config.backgroundTurnMs ?? BACKGROUND_TURN_MS;
  }
  override createDriver(): Driver {
    return new FifoGateDriver(super.createDriver(), new FifoGate(this.backgroundTurnMs));
  }
}

/**
 * One holder at a time. Waiters are served in the order they came, the API's (foreground)
 * before background work's; background work is handed the connection within a turn of the
 * event loop only until that turn has used `budgetMs` (BACKGROUND_TURN_MS): handing the
 * connection from holder to holder is a chain of promise resolutions, which never yields on its
 * own (128 box messages and their statements ran as one turn of the loop of 0.1-0.3 s, and every
 * API call that arrived waited for its end; bench/README.md, "reconnect-storm", runs 50-58).
 */
export class FifoGate {
  private held = false;
  private readonly foreground: (() => void)[] = [];
  private readonly background: (() => void)[] = [];
  /** When the current run of hand-overs began (performance.now()). */
  private since = 0;
  private readonly budgetMs: number;
  private readonly now: () => number;

  constructor(budgetMs = BACKGROUND_TURN_MS, now: () => number = () => performance.now()) {
    this.budgetMs = budgetMs;
    this.now = now;
  }

  lock(background = false): Promise<void> {
    if (!this.held) {
      this.held = true;
      this.since = this.now();
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => (background ? this.background : this.foreground).push(resolve));
  }

  unlock(): void {
    const first = this.foreground.shift();
    if (first) {
      first();
      return;
    }
    if (this.background.length === 0) {
      this.held = false;
      return;
    }
    if (this.now() - this.since < this.budgetMs) {
      this.background.shift()!();
      return;
    }
    // Still held while the loop turns: whoever is first in line then gets it (a request that
    // arrived meanwhile before the background work).
    setImmediate(() => {
      this.since = this.now();
      (this.foreground.shift() ?? this.background.shift()!)();
    });
  }
}

class FifoGateDriver implements Driver {
  private readonly gate: FifoGate;
  private readonly inner: Driver;
  constructor(inner: Driver, gate: FifoGate) {
    this.inner = inner;
    this.gate = gate;
  }

  init(): Promise<void> {
    return this.inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    await this.gate.lock(isBackground());
    try {
      return await this.inner.acquireConnection();
    } catch (e) {
      this.gate.unlock();
      throw e;
    }
  }
  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    try {
      await this.inner.releaseConnection(connection);
    } finally {
      this.gate.unlock();
    }
  }
  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(connection, settings);
  }
  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(connection);
  }
  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(connection);
  }
  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.inner.savepoint!(connection, name, compile);
  }
  rollbackToSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.inner.rollbackToSavepoint!(connection, name, compile);
  }
  releaseSavepoint(
    connection: DatabaseConnection,
    name: string,
    compile: QueryCompiler['compileQuery'],
  ): Promise<void> {
    return this.inner.releaseSavepoint!(connection, name, compile);
  }
  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
