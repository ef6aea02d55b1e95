/** Following a task on a terminal (or not): its status line, Ctrl-C's choices, and what is printed at its end. */
import { select } from '@inquirer/prompts';
import ora, { type Ora } from 'ora';
import { DeploymentLinks } from '../../shared/links.ts';
import type { DetailedTask } from '../../shared/protocol/wire-types.ts';
import type { InputRequest } from '../../shared/tasks/model.ts';
import type { GivenAnswers } from './answers.ts';
import { type FollowOutcome, type InputResponses, resultText, type TasksClient } from './client.ts';
import { EXIT_FAILED, EXIT_NEEDS_INPUT, Exit, type GlobalOptions, interactive } from './command.ts';
import { isPromptInterrupt } from './prompts.ts';

/** How a task is followed: who answers its questions, and whether a person may be asked. */
export interface FollowInput {
  onInput: (requests: Record<string, InputRequest>) => Promise<InputResponses | undefined>;
  /** Whether the person at the terminal may be prompted (`--no-input` says no). */
  allowInput: boolean;
  /** Answers given up front (`--answer`, `--answers-file`): a round they cover is answered here, not waited for. */
  given: GivenAnswers;
}

/**
 * Follows a task, showing its status, until it ends, or it waits for input
 * nobody gave (exit 3), or the person detaches. Ctrl-C offers to cancel the
 * task, detach from it, or keep watching (on a terminal; elsewhere it detaches).
 */
export async function followToEnd(
  client: TasksClient,
  handle: Pick<DetailedTask, 'taskId'> & Partial<DetailedTask>,
  input: FollowInput,
  globals: GlobalOptions,
): Promise<void> {
  const { taskId } = handle;
  const status = new StatusLine(taskId, !globals.json, process.stderr.isTTY === true);
  let controller = new AbortController();
  const onSigint = () => controller.abort(new Interrupted());
  process.on('SIGINT', onSigint);
  try {
    let next: Pick<DetailedTask, 'taskId'> & Partial<DetailedTask> = handle;
    for (;;) {
      let outcome: FollowOutcome;
      try {
        outcome = await client.follow(next, {
          signal: controller.signal,
          onUpdate: (task) => status.update(task, answeredHere(task, input.given)),
          onInput: async (requests) => {
            status.pause();
            try {
              return await input.onInput(requests);
            } catch (error) {
              if (isPromptInterrupt(error)) throw new Interrupted();
              throw error;
            } finally {
              status.resume();
            }
          },
        });
      } catch (error) {
        if (!(error instanceof Interrupted) && !(controller.signal.reason instanceof Interrupted && controller.signal.aborted)) throw error;
        if ((await afterInterrupt(client, taskId, status, globals, input.allowInput)) === 'detached') return;
        controller = new AbortController();
        next = { taskId, pollIntervalMs: 0 };
        continue;
      }
      status.stop();
      if (outcome.reason === 'input_required') {
        if (globals.json) printTask(outcome.task, globals);
        else describeInput(taskId, outcome.task.inputRequests ?? {}, globals);
        throw new Exit(EXIT_NEEDS_INPUT);
      }
      return finish(outcome.task, globals);
    }
  } finally {
    status.stop();
    process.off('SIGINT', onSigint);
  }
}

/**
 * The status shown for a task waiting on questions this CLI answers itself
 * from the given answers: not the server's "waiting for a person", which is
 * meant for those who would have to answer. `undefined`: the server's words.
 */
function answeredHere(task: DetailedTask, given: GivenAnswers): string | undefined {
  if (task.status !== 'input_required' || !given.covers(task.inputRequests ?? {})) return undefined;
  return `input_required: answering ${Object.keys(task.inputRequests ?? {}).join(', ')} from the given answers`;
}

/** What Ctrl-C leads to: the task cancelled (and still followed to its end), left alone, or watched on. */
async function afterInterrupt(
  client: TasksClient,
  taskId: string,
  status: StatusLine,
  globals: GlobalOptions,
  allowInput: boolean,
): Promise<'detached' | 'watching'> {
  status.pause();
  const choice = interactive(globals, allowInput) ? await interruptChoice(taskId) : 'detach';
  if (choice === 'detach') {
    process.stderr.write(`Detached; the task goes on. Resume with: mcp-tasks watch ${taskId}\n`);
    return 'detached';
  }
  if (choice === 'cancel') {
    await client.cancel(taskId);
    process.stderr.write(`Cancellation requested for ${taskId}\n`);
  }
  status.resume();
  return 'watching';
}

class Interrupted extends Error {
  constructor() {
    super('Interrupted');
  }
}

async function interruptChoice(taskId: string): Promise<'cancel' | 'detach' | 'watch'> {
  try {
    return await select({
      message: `Task ${taskId}: what now?`,
      choices: [
        { name: 'Detach (the task goes on; resume with mcp-tasks watch)', value: 'detach' as const },
        { name: 'Cancel the task', value: 'cancel' as const },
        { name: 'Keep watching', value: 'watch' as const },
      ],
    });
  } catch (error) {
    if (isPromptInterrupt(error)) return 'detach'; // a second Ctrl-C leaves the task alone
    throw error;
  }
}

/** The live status line on a terminal (spinner, statusMessage, elapsed time), plain lines on changes elsewhere. */
class StatusLine {
  readonly #started = Date.now();
  #spinner: Ora | undefined;
  #timer: NodeJS.Timeout | undefined;
  #text = '';
  #lastLine = '';

  constructor(
    private readonly taskId: string,
    private readonly enabled: boolean,
    private readonly tty: boolean,
  ) {
    this.resume();
  }

  /** Shows the task's state: its status and the server's message, or `text` instead. */
  update(task: DetailedTask, text?: string): void {
    this.#text = text ?? `${task.status}${task.statusMessage ? `: ${task.statusMessage}` : ''}`;
    if (!this.enabled) return;
    if (this.tty) {
      this.#render();
      return;
    }
    if (this.#text !== this.#lastLine) process.stderr.write(`[${this.taskId}] ${this.#text}\n`);
    this.#lastLine = this.#text;
  }

  pause(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#spinner?.stop();
    this.#spinner = undefined;
  }

  resume(): void {
    if (!this.enabled || !this.tty || this.#spinner) return;
    this.#spinner = ora({ stream: process.stderr, discardStdin: false }).start();
    this.#render();
    this.#timer = setInterval(() => this.#render(), 1000);
  }

  stop(): void {
    this.pause();
  }

  #render(): void {
    if (this.#spinner) this.#spinner.text = `${this.#text || 'starting'} (${Math.round((Date.now() - this.#started) / 1000)}s)`;
  }
}

/**
 * A task's page in the console of the deployment the CLI talks to: the
 * endpoint URL it was given (`…/mcp`) is the deployment's own, and the
 * console is served beside it.
 */
export function taskPage(globals: GlobalOptions, taskId: string): string {
  const url = new URL(globals.url);
  const base = url.pathname.endsWith('/mcp') ? `${url.origin}${url.pathname.slice(0, -'/mcp'.length)}` : url.origin;
  return new DeploymentLinks(base).taskPage(taskId)!;
}

export function describeInput(taskId: string, requests: Record<string, InputRequest>, globals: GlobalOptions): void {
  process.stderr.write(`Task ${taskId} waits for input (its page: ${taskPage(globals, taskId)}):\n`);
  for (const [key, request] of Object.entries(requests)) {
    const message = typeof request.params?.['message'] === 'string' ? request.params['message'] : request.method;
    const schema = request.params?.['requestedSchema'];
    process.stderr.write(`  ${key}: ${message}${schema ? ` ${JSON.stringify(schema)}` : ''}\n`);
  }
  process.stderr.write(`Answer on its page, or with: mcp-tasks answer ${taskId} --answer <key>.<field>=<value>\n`);
}

/** What is printed when a followed task ends: its result (on stdout), then how it ended (the last line), or the task as JSON. */
function finish(task: DetailedTask, globals: GlobalOptions): void {
  if (globals.json) printTask(task, globals);
  else {
    if (task.status === 'completed') process.stdout.write(`${resultText(task.result) || JSON.stringify(task.result)}\n`);
    process.stderr.write(`${endLine(task)}\n`);
  }
  if (task.status !== 'completed' || task.result?.['isError'] === true) throw new Exit(EXIT_FAILED);
}

/**
 * How a task ended, in the server's words: its status, and the status
 * message the server gives the ended task (for a failure, the error too).
 */
function endLine(task: DetailedTask): string {
  const said = task.statusMessage ? `: ${task.statusMessage}` : '';
  switch (task.status) {
    case 'completed':
      return `Task ${task.taskId} completed${task.result?.['isError'] === true ? ' with a tool error' : ''}${said}`;
    case 'failed': {
      const error = task.error ? `error ${task.error.code}: ${task.error.message}` : 'no reason given';
      return task.statusMessage ? `Task ${task.taskId} failed${said} (${error})` : `Task ${task.taskId} failed: ${error}`;
    }
    case 'cancelled':
      return `Task ${task.taskId} was cancelled${said}`;
    default:
      return `Task ${task.taskId} is ${task.status}${said}`;
  }
}

export function printResult(result: Record<string, unknown>, globals: GlobalOptions): void {
  process.stdout.write(globals.json ? `${JSON.stringify(result)}\n` : `${resultText(result) || JSON.stringify(result)}\n`);
  if (result['isError'] === true) throw new Exit(EXIT_FAILED);
}

export function printTask(task: DetailedTask, globals: GlobalOptions): void {
  if (globals.json) {
    process.stdout.write(`${JSON.stringify(task)}\n`);
    return;
  }
  const lines = [`${task.taskId}  ${task.status}${task.statusMessage ? `  ${task.statusMessage}` : ''}`];
  if (task.status === 'completed') lines.push(resultText(task.result) || JSON.stringify(task.result));
  if (task.status === 'failed') lines.push(`error ${task.error?.code}: ${task.error?.message}`);
  if (task.status === 'input_required')
    for (const [key, request] of Object.entries(task.inputRequests ?? {}))
      lines.push(`waiting for ${key}: ${String(request.params?.['message'] ?? request.method)}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}
