/** What every `mcp-tasks` command shares: its options, exit codes, the client for the endpoint, answers given or asked. */
import { CommanderError } from 'commander';
import type { InputRequest } from '../../shared/tasks/model.ts';
import type { GivenAnswers } from './answers.ts';
import { type InputResponses, TasksClient } from './client.ts';
import { currentToken } from './login.ts';
import { LoginStore } from './login-store.ts';
import { promptForInput } from './prompts.ts';

export const DEFAULT_URL = 'http://127.0.0.1:3000/mcp';

/** Exit codes (docs/clients.md lists them): the tool or task failed or was cancelled, or the server refused a request. */
export const EXIT_FAILED = 1;
/** The command line was not understood. */
export const EXIT_USAGE = 2;
/** The task waits for input that was not given (answer it later by id). */
export const EXIT_NEEDS_INPUT = 3;
/** The endpoint could not be reached, after retrying for `--retry-for` seconds. */
export const EXIT_UNREACHABLE = 4;
/** SIGTERM stopped the command (128 + 15, as a shell reports a process ended by it); a task it followed goes on. */
export const EXIT_TERMINATED = 143;

/** How long requests the transport fails are retried unless `--retry-for` says otherwise (seconds). */
export const DEFAULT_RETRY_FOR_SECONDS = 30;

export interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
  /** Seconds to retry requests the transport fails. */
  retryFor: number;
}

export interface AnswerOptions {
  answer: string[];
  answersFile?: string;
  input: boolean;
}

/** Thrown to end the command with an exit code (the message, if any, already printed). */
export class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** A client for the endpoint, with `--token`, else the token `login` kept for this endpoint (renewed if due). */
export async function makeClient(globals: GlobalOptions): Promise<TasksClient> {
  const secret = process.env['MCP_TASKS_CLIENT_SECRET'];
  const token = globals.token ?? (await currentToken(globals.url, new LoginStore(), secret ? { clientSecret: secret } : {}));
  return new TasksClient({
    url: globals.url,
    ...(token ? { token } : {}),
    clientInfo: { name: 'mcp-tasks-cli', version: '0.1.0' },
    retry: {
      forMs: globals.retryFor * 1000,
      onRetry: (reason) =>
        void process.stderr.write(`Cannot reach ${globals.url} (${reason}); trying again for up to ${globals.retryFor} s\n`),
    },
  });
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** A number of seconds from the command line (0 or more). */
export function parseSeconds(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0)
    throw new CommanderError(EXIT_USAGE, 'mcp-tasks.arguments', `Expected a number of seconds, got "${text}"`);
  return value;
}

export function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CommanderError(EXIT_USAGE, 'mcp-tasks.arguments', `The ${what} must be a JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CommanderError(EXIT_USAGE, 'mcp-tasks.arguments', `The ${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

/**
 * Whether `stream` is a terminal that can be drawn on: a TTY with a size. A
 * pseudo-terminal of 0×0 (as `script` makes when it has no terminal of its
 * own) is treated as no terminal: nothing can be laid out on it, and
 * spinner libraries count the lines of their text by dividing by its width.
 */
export function sizedTerminal(stream: { isTTY?: boolean; columns?: number; rows?: number }): boolean {
  return stream.isTTY === true && (stream.columns ?? 0) > 0 && (stream.rows ?? 0) > 0;
}

export function interactive(globals: GlobalOptions, allowInput: boolean): boolean {
  return allowInput && !globals.json && process.stdin.isTTY === true && sizedTerminal(process.stderr);
}

/** Given answers first; otherwise a prompt on a terminal; otherwise none (the task keeps waiting). */
export function inputHandler(given: GivenAnswers, allowInput: boolean, globals: GlobalOptions) {
  return async (requests: Record<string, InputRequest>): Promise<InputResponses | undefined> => {
    const fromFlags = given.answer(requests);
    if (fromFlags) return fromFlags;
    if (!interactive(globals, allowInput)) return undefined;
    return promptForInput(requests);
  };
}
