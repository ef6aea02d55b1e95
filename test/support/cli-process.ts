/**
 * The `mcp-tasks` CLI (package bin `bin/mcp-tasks.js`) run as a child
 * process without a terminal (stdin closed), as a script runs it: its exit
 * code and what it printed, and what it printed so far while it runs.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** A CLI process under way: its output so far, and its end. */
export interface CliProcess {
  stderr(): string;
  done: Promise<CliRun>;
}

/** Starts `mcp-tasks <args>` against `url` (`MCP_TASKS_URL`); through `npx` with `viaNpx`, as a user types it. */
export function startCli(url: string, args: string[], options: { viaNpx?: boolean; timeoutMs?: number } = {}): CliProcess {
  const [file, argv] = options.viaNpx ? ['npx', ['--no-install', 'mcp-tasks', ...args]] : [process.execPath, [BIN, ...args]];
  let stderr = '';
  const done = new Promise<CliRun>((resolve) => {
    const child = execFile(
      file,
      argv,
      { cwd: ROOT, env: { ...process.env, MCP_TASKS_URL: url }, timeout: options.timeoutMs ?? 60_000 },
      (error, out, err) => resolve({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout: out, stderr: err }),
    );
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk));
    child.stdin?.end();
  });
  return { stderr: () => stderr, done };
}

/** Runs `mcp-tasks <args>` against `url` to its end. */
export function runCli(url: string, args: string[], options: { viaNpx?: boolean; timeoutMs?: number } = {}): Promise<CliRun> {
  return startCli(url, args, options).done;
}
