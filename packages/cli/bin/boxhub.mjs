#!/usr/bin/env node
// The `boxhub` command. Sources are TypeScript run through tsx's loader (no build step), so
// `npx boxhub ...` works straight after `npm ci`.
import { register } from 'tsx/esm/api';
register();
const { main } = await import('../src/main.ts');
process.exitCode = await main(process.argv.slice(2));
