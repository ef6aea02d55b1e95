/**
 * Runs the local stack (`bin/local/main.ts`, what `npm start` runs) as a
 * child process, the way a developer does: tests talk to it over HTTP only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_SETTINGS } from '../../shared/config.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const READY = /MCP endpoint ready at (http:\/\/\S+)/;
// Generous: a busy machine starts the stack (emulators, tsx compile) much slower than an idle one.
const START_TIMEOUT_MS = 90_000;
const STOP_TIMEOUT_MS = 20_000;

/**
 * How long a cancelled running task may take to end under `npm start`'s
 * settings: up to one cancellation check of its worker
 * (`TASKS_CANCEL_CHECK_MS`), plus a few seconds for polling on a loaded
 * machine. A task the worker has not claimed yet ends at once.
 */
export const CANCEL_SETTLES_MS = DEFAULT_SETTINGS.cancelCheckMs + 3_000;

export interface LocalStackProcess {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  url: string;
  /** The data directory the stack keeps its table in. */
  dataDir: string;
  /** Sends SIGTERM and waits for the exit (SIGKILL after a timeout); resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Sends a signal without waiting. */
  kill(signal?: NodeJS.Signals): void;
  /** Everything the process printed so far (stdout and stderr). */
  output(): string;
}

export interface LocalStackProcessOptions {
  /** Extra environment for the stack (e.g. `TASKS_*` settings). */
  env?: Record<string, string>;
  /**
   * Data directory to use (and keep). Without it a fresh temporary directory
   * is used and removed on `stop()`.
   */
  dataDir?: string;
  /** The module to run in place of `bin/local/main.ts`: one that prints the same ready line (e.g. `stack-with-fault.ts`). */
  entry?: string;
}

/** Starts the stack on a free port and waits for its ready line. */
export async function startLocalStackProcess(options: LocalStackProcessOptions = {}): Promise<LocalStackProcess> {
  const ownDataDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'mcp-tasks-local-')));
  const child = spawn(process.execPath, ['--import', 'tsx', options.entry ?? 'bin/local/main.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOCAL_DATA_DIR: dataDir, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  let stopping: Promise<number | null> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      const code = await terminate(child, exited);
      if (ownDataDir) await rm(dataDir, { recursive: true, force: true });
      return code;
    })());

  try {
    const url = await waitForReady(child, exited, () => output);
    return { url, dataDir, stop, kill: (signal = 'SIGTERM') => void child.kill(signal), output: () => output };
  } catch (error) {
    await stop();
    throw error;
  }
}

function waitForReady(child: ChildProcess, exited: Promise<number | null>, output: () => string): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => finish(new Error(`Local stack not ready after ${START_TIMEOUT_MS} ms:\n${output()}`)), START_TIMEOUT_MS);
    const onData = () => {
      const match = READY.exec(output());
      if (match) finish(match[1]!);
    };
    function finish(result: string | Error) {
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      if (typeof result === 'string') resolve(result);
      else reject(result);
    }
    child.stdout!.on('data', onData);
    void exited.then((code) => finish(new Error(`Local stack exited with code ${code} before it was ready:\n${output()}`)));
  });
}

async function terminate(child: ChildProcess, exited: Promise<number | null>): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return exited;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}
