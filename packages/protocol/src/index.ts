export * from './errors.ts';
export * from './constants.ts';
export * from './box-messages.ts';
export * from './json.ts';
export * as api from './api/index.ts';
