#!/usr/bin/env node
// The `boxhub` command. `@boxhub/cli` resolves through the package's own `exports`: plain node
// runs the built JavaScript in dist/ (`npm run build`), with no TypeScript loader at run time;
// a process started with `--conditions=@boxhub/source --import tsx` (how the tests run, see
// docs/architecture.md "Build and run") runs the TypeScript sources instead.
import { main } from '@boxhub/cli';

process.exitCode = await main(process.argv.slice(2));
