/** What every `mcp-tasks` command shares: its options, exit codes, the client for the endpoint, answers given or asked. */
import { CommanderError } from 'commander';
import type { GivenAnswers } from './answers.ts';
import { type InputRequest, type InputResponses, TasksClient } from './client.ts';
import { currentToken } from './login.ts';
import { LoginStore } from './login-store.ts';
import { promptForInput } from './prompts.ts';

export const DEFAULT_URL = 'http://127.0.0.1:3000/mcp';
export const EXIT_FAILED = 1;
export const EXIT_NEEDS_INPUT = 3;

export interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
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
  return new TasksClient({ url: globals.url, ...(token ? { token } : {}), clientInfo: { name: 'mcp-tasks-cli', version: '0.1.0' } });
}

export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CommanderError(2, 'mcp-tasks.arguments', `The ${what} must be a JSON object`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new CommanderError(2, 'mcp-tasks.arguments', `The ${what} must be a JSON object`);
  return value as Record<string, unknown>;
}

export function interactive(globals: GlobalOptions, allowInput: boolean): boolean {
  return allowInput && !globals.json && process.stdin.isTTY === true && process.stderr.isTTY === true;
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
