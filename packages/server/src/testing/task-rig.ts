// The task core on its own, for unit tests of TaskLifecycle, the create handshake and the job
// event router: a real database (SQLite in memory on the embedded pass, a schema of its own on
// PostgreSQL on the scale-out pass), migrated; the real task repository, job runner and local
// blob store; time on a ManualClock. No broker and no HTTP server: what would go to a box is
// what the test's own box side records or answers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes, randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { openDb, type Db } from '../db/connect.ts';
import { migrate } from '../db/migrate.ts';
import { Jobs } from '../jobs/jobs.ts';
import { JobRepository } from '../jobs/repository.ts';
import { JobRunner } from '../jobs/runner.ts';
import { LocalBlobStore } from '../storage/local-store.ts';
import { TaskLifecycle } from '../tasks/lifecycle.ts';
import type { NewTask } from '../tasks/repository.ts';
import { TaskRepository } from '../tasks/repository.ts';
import { engine, testSchemaName } from './harness.ts';
import { ManualClock } from './manual-clock.ts';

export interface TaskRig {
  db: Db;
  clock: ManualClock;
  tasks: TaskRepository;
  jobRepo: JobRepository;
  runner: JobRunner;
  jobs: Jobs;
  blobs: LocalBlobStore;
  lifecycle: TaskLifecycle;
  log: Logger;
  /** Another box bound to the rig's application (`box-1` is there from the start). */
  addDevice(uuid: string, online?: 0 | 1): Promise<void>;
  /** A new task's row as create takes it (kind scan, device `box-1` unless told). */
  newTask(o?: Partial<NewTask>): NewTask;
  close(): Promise<void>;
}

export async function startTaskRig(): Promise<TaskRig> {
  const external = engine === 'external';
  const url = process.env.BOXHUB_TEST_DATABASE_URL;
  if (external && !url) throw new Error('BOXHUB_TEST_DATABASE_URL must be set for BOXHUB_TEST_ENGINE=external');
  const db = await openDb(external ? { url, pgSchema: testSchemaName() } : {});
  await migrate(db);
  const clock = new ManualClock();
  // The application the tasks belong to (a foreign key); nothing here reads more of it.
  await db.kysely
    .insertInto('applications')
    .values({
      id: 'app-1',
      name: 'app-1',
      api_key_hash: 'moved:none',
      api_key_prefix: '',
      callback_secret: 'unused',
      previous_callback_secret: null,
      previous_secret_expires_at: null,
      cap_ess: 0,
      created_at: clock.now(),
    })
    .execute();
  const addDevice = async (uuid: string, online: 0 | 1 = 0): Promise<void> => {
    await db.kysely
      .insertInto('devices')
      .values({
        uuid,
        code: uuid.toUpperCase(),
        model: 'rig',
        secret_hash: 'unused',
        app_id: 'app-1',
        online,
        created_at: clock.now(),
      })
      .execute();
  };
  // The box the tasks run on, bound to that application (a box task's create holds the binding).
  await addDevice('box-1');
  const log: Logger = pino({ level: process.env.BOXHUB_TEST_LOG ?? 'silent' });
  const tasks = new TaskRepository(db.kysely);
  const jobRepo = new JobRepository(db.kysely, db.dialect);
  const runner = new JobRunner(jobRepo, clock, log, { pollMs: 50 });
  const jobs = new Jobs(jobRepo, runner, clock);
  const dir = mkdtempSync(join(tmpdir(), 'boxhub-task-rig-'));
  const blobs = new LocalBlobStore({ root: dir, secret: randomBytes(32), baseUrl: () => 'http://127.0.0.1:9', clock });
  const lifecycle = new TaskLifecycle({ tasks, jobs, blobs, clock, log });
  return {
    addDevice,
    db,
    clock,
    tasks,
    jobRepo,
    runner,
    jobs,
    blobs,
    lifecycle,
    log,
    newTask: (o = {}) => ({
      uuid: randomUUID(),
      kind: 'scan',
      app_id: 'app-1',
      device_uuid: 'box-1',
      callback_url: null,
      options: '{}',
      created_at: clock.now(),
      expires_at: clock.now() + 3_600_000,
      ...o,
    }),
    async close() {
      await runner.stop();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
