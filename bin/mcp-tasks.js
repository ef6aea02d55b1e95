#!/usr/bin/env node
// The `mcp-tasks` command. Installed from the package it runs the compiled CLI (`dist/`); in a checkout of
// the repository, the TypeScript sources (`bin/cli/`, not part of the package). Either way tsx's loader is
// registered first: the sources need it here, and `start` and `dev` import a project's TypeScript tools.
import { existsSync } from 'node:fs';
import { register } from 'tsx/esm/api';

register();
if (existsSync(new URL('./cli/cli.ts', import.meta.url))) {
  const { main } = await import('./cli/cli.ts');
  process.exitCode = await main(process.argv);
} else {
  const { main } = await import('../dist/bin/cli/cli.js');
  process.exitCode = await main(process.argv);
}
