// Worker entry when run from the TypeScript sources (tests, `npm run dev`): a worker thread does
// not inherit a loader registered through tsx's API, so it registers its own (as the recognizer's
// page-worker-boot.mjs does). Built, run.ts starts worker.js directly.
import { register } from 'tsx/esm/api';
register();
await import('./worker.ts');
