// The PDF work the server, the box and the recognizer share (docs/printing.md, "PDF engines"):
// a document tool run under limits (limited-tool.ts), which engine does the work
// (pdf-engines.ts) and the built-in engine on worker threads (builtin-pdf/). Each module is
// also imported by its own subpath (`@boxhub/pdf-tools/limited-tool.ts`).
export * from './limited-tool.ts';
export * from './pdf-engines.ts';
export { runBuiltin, type BuiltinOutcome } from './builtin-pdf/run.ts';
export type { BuiltinTask, InspectResult } from './builtin-pdf/tasks.ts';
