/**
 * The `mcp-tasks` CLI run at a terminal: in a pseudo-terminal with a size
 * (`@lydell/node-pty`, 120×40), as a person runs it, and in one of 0×0, as
 * `script` makes when it has no terminal of its own (`script -qfec "…"
 * /dev/null < /dev/null`). Each records what was printed, and when.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type IPty, spawn as spawnPty } from '@lydell/node-pty';
import { waitFor } from './wait.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/mcp-tasks.js', import.meta.url));

/** The most output kept: a CLI that floods its terminal is caught without the test holding the flood. */
const MAX_KEPT_CHARS = 4_000_000;

/** A person at a terminal: no `CI` variable (under it the spinner library, rightly, does not animate). */
function personEnv(url: string): Record<string, string> {
  const { CI: _ci, ...rest } = process.env;
  return { ...rest, MCP_TASKS_URL: url, TERM: 'xterm-256color' } as Record<string, string>;
}

/** What a terminal received: every chunk with the time it came. */
abstract class Screen {
  readonly chunks: Array<{ at: number; data: string }> = [];
  /** How many characters were printed in all (kept or not). */
  printed = 0;
  #kept = 0;

  protected receive(data: string): void {
    this.printed += data.length;
    if (this.#kept > MAX_KEPT_CHARS) return;
    this.#kept += data.length;
    this.chunks.push({ at: Date.now(), data });
  }

  /** Everything printed, escape sequences included. */
  get raw(): string {
    return this.chunks.map((chunk) => chunk.data).join('');
  }

  /** Everything printed, without escape sequences. */
  get text(): string {
    return this.raw.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
  }

  /** Waits until `pattern` shows up after the text seen so far (from `since`); returns where to look next. */
  async waitFor(pattern: RegExp, since = 0, timeoutMs = 20_000): Promise<number> {
    const at = await waitFor(
      () => `${pattern}; terminal so far:\n${this.text.slice(-4000)}`,
      () => {
        const found = this.text.slice(since).search(pattern);
        return found >= 0 ? found : undefined;
      },
      timeoutMs,
      100,
    );
    return since + at + 1;
  }
}

/** The CLI in a pseudo-terminal of 120×40: what it printed, keys to type, signals, and its exit. */
export class Terminal extends Screen {
  readonly #pty: IPty;
  readonly exited: Promise<{ exitCode: number; signal?: number }>;

  constructor(url: string, args: string[]) {
    super();
    this.#pty = spawnPty(process.execPath, [BIN, ...args], { cols: 120, rows: 40, cwd: ROOT, env: personEnv(url) });
    this.#pty.onData((data) => this.receive(data));
    this.exited = new Promise((resolve) => this.#pty.onExit(resolve));
  }

  type(keys: string): void {
    this.#pty.write(keys);
  }

  signal(signal: NodeJS.Signals): void {
    process.kill(this.#pty.pid, signal);
  }

  kill(): void {
    this.#pty.kill('SIGKILL');
  }
}

/**
 * The CLI in a pseudo-terminal of 0×0, made by `script` with no terminal of
 * its own (its standard input is /dev/null). `exited` is the CLI's exit
 * code as `script -e` reports it (128 + n for a signal).
 */
export class ZeroSizeTerminal extends Screen {
  readonly #script: ChildProcess;
  readonly exited: Promise<number | null>;

  constructor(url: string, args: string[]) {
    super();
    const quoted = [process.execPath, BIN, ...args].map((word) => `'${word.replaceAll("'", "'\\''")}'`).join(' ');
    this.#script = spawn('script', ['-qfec', `exec ${quoted}`, '/dev/null'], {
      cwd: ROOT,
      env: personEnv(url),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.#script.stdout!.setEncoding('utf8').on('data', (data: string) => this.receive(data));
    this.#script.stderr!.setEncoding('utf8').on('data', (data: string) => this.receive(data));
    this.exited = new Promise((resolve) => this.#script.once('exit', (code) => resolve(code)));
  }

  /** The CLI's process: `script`'s one child (the command `exec`s it). */
  async cli(): Promise<number> {
    const pid = this.#script.pid!;
    return waitFor(
      'the CLI under script',
      () => {
        const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
        return children === '' ? undefined : Number(children.split(' ')[0]);
      },
      10_000,
      25,
    );
  }

  async signal(signal: NodeJS.Signals): Promise<void> {
    process.kill(await this.cli(), signal);
  }

  /** Ends both processes, whatever they are doing (the CLI first: `script` would wait for it). */
  async kill(): Promise<void> {
    if (this.#script.exitCode !== null || this.#script.signalCode !== null) return;
    const pid = this.#script.pid!;
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const child of children === '' ? [] : children.split(' ')) process.kill(Number(child), 'SIGKILL');
    this.#script.kill('SIGKILL');
  }
}
