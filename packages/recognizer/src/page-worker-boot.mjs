// Worker entry: the package is TypeScript run through tsx (no build step), and a worker
// thread does not inherit a loader registered through tsx's API, so it registers its own.
import { register } from 'tsx/esm/api';
register();
await import('./page-worker.ts');
