#!/usr/bin/env node
// The sources are TypeScript run by tsx: register its loader, then run the CLI.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('./cli/cli.ts');
process.exitCode = await main(process.argv);
