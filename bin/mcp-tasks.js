#!/usr/bin/env node
// The `mcp-tasks` command. Installed from the package it runs the compiled CLI (`dist/`); in a checkout of
// the repository, the TypeScript sources (`bin/cli/`, not part of the package). Either way tsx's loader is
// registered first: the sources need it here, and `start` and `dev` import a project's TypeScript tools.
// It needs Node ≥ 22 (the package's `engines`): on an older Node it says so before loading anything.
import { existsSync } from 'node:fs';

const NODE_FLOOR = 22;
if (Number(process.versions.node.split('.')[0]) < NODE_FLOOR) {
  process.stderr.write(
    `mcp-tasks needs Node ≥ ${NODE_FLOOR}; this is Node ${process.versions.node} (${process.execPath}). ` +
      `Install Node ${NODE_FLOOR} or newer (nodejs.org, or a version manager such as nvm or fnm) and run it again.\n`,
  );
  process.exit(1);
}
const { register } = await import('tsx/esm/api');
register();
if (existsSync(new URL('./cli/cli.ts', import.meta.url))) {
  const { main } = await import('./cli/cli.ts');
  process.exitCode = await main(process.argv);
} else {
  const { main } = await import('../dist/bin/cli/cli.js');
  process.exitCode = await main(process.argv);
}
