// Worker threads do not inherit a loader registered through tsx's API; register it here.
import { register } from 'tsx/esm/api';
register();
const { workerData } = await import('node:worker_threads');
await import(workerData.entry);
