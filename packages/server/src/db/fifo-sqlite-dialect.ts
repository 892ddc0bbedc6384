// Kysely's SQLite driver hands its one connection over with a mutex that wakes every waiter at
// each release (kysely 0.28, sqlite-driver.js `ConnectionMutex`: `while (promise) await promise`),
// so N statements waiting for the connection cost O(N²) wake-ups. boxhub issues thousands at
// once when a fleet comes back (a presence, a state and their checks per box), and that cost
// alone held the event loop for seconds (bench/README.md, "reconnect-storm"). This dialect puts
// a first-come-first-served gate in front of the driver: only the caller at the head of the line
// reaches Kysely's mutex, which is then never contended, and each release wakes one caller.
// Kysely's own driver does all the rest (transactions, savepoints, streaming).
import {
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  SqliteDialect,
  type TransactionSettings,
} from 'kysely';

export class FifoSqliteDialect extends SqliteDialect {
  override createDriver(): Driver {
    return new FifoGateDriver(super.createDriver());
  }
}

/** One holder at a time, the others woken one by one in the order they came. */
export class FifoGate {
  private held = false;
  private readonly waiting: (() => void)[] = [];

  lock(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  unlock(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.held = false;
  }
}

class FifoGateDriver implements Driver {
  private readonly gate = new FifoGate();
  private readonly inner: Driver;
  constructor(inner: Driver) {
    this.inner = inner;
  }

  init(): Promise<void> {
    return this.inner.init();
  }
  async acquireConnection(): Promise<DatabaseConnection> {
    await this.gate.lock();
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
