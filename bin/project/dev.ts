/**
 * `mcp-tasks dev`: `mcp-tasks start` under `tsx watch`, so an edit to a tool
 * (or to `settings.local.json`) restarts the stack with the new code. Tasks
 * in flight carry on across the restart (start-up recovery), judged by the
 * replay rules (docs/tools.md).
 */
import { spawn } from 'node:child_process';
import { realpathSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { StartOptions } from './start.ts';

/** Runs `start` under tsx's watch mode until it exits; resolves with its exit code. */
export async function devProject(options: StartOptions): Promise<number> {
  const tsx = fileURLToPath(import.meta.resolve('tsx/cli'));
  // The `mcp-tasks` launcher this process runs (through npm's bin link): watch mode starts it again on each edit.
  const launcher = realpathSync(process.argv[1] ?? '');
  const child = spawn(
    process.execPath,
    [
      tsx,
      'watch',
      '--clear-screen=false',
      '--include',
      'settings.local.json',
      launcher,
      'start',
      '--tools',
      options.tools,
      '--export',
      options.export,
    ],
    { stdio: 'inherit' },
  );
  // The terminal's Ctrl-C reaches the child too (same process group); a SIGTERM to this process is passed on.
  const forward = () => child.kill('SIGTERM');
  process.on('SIGTERM', forward);
  return await new Promise<number>((done) =>
    child.once('exit', (code) => {
      process.off('SIGTERM', forward);
      done(code ?? 1);
    }),
  );
}
