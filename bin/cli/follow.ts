/** Following a task on a terminal (or not): its status line, Ctrl-C's choices, and what is printed at its end. */
import { select } from '@inquirer/prompts';
import { delay } from '../../shared/delay.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import type { DetailedTask } from '../../shared/protocol/wire-types.ts';
import { type InputRequest, isTerminal } from '../../shared/tasks/model.ts';
import type { GivenAnswers } from './answers.ts';
import { type FollowOutcome, type InputResponses, resultText, splitQuestions, type TasksClient } from './client.ts';
import { EXIT_FAILED, EXIT_NEEDS_INPUT, EXIT_TERMINATED, Exit, type GlobalOptions, interactive, sizedTerminal } from './command.ts';
import { isPromptInterrupt } from './prompts.ts';
import { StatusLine } from './status-line.ts';

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
 * task, detach from it, or keep watching (on a terminal; elsewhere it
 * detaches). A question only an approver other than the caller may decide is
 * not asked here: the CLI says so, names the task's page, and follows on.
 * SIGTERM stops following at once (exit 143); the task goes on.
 */
export async function followToEnd(
  client: TasksClient,
  handle: Pick<DetailedTask, 'taskId'> & Partial<DetailedTask>,
  input: FollowInput,
  globals: GlobalOptions,
): Promise<void> {
  const { taskId } = handle;
  const status = new StatusLine(taskId, !globals.json, sizedTerminal(process.stderr));
  const approvers = new ApproverNotice(taskId, globals);
  let controller = new AbortController();
  const onSigint = () => controller.abort(new Interrupted());
  // Exits at once, even from inside a prompt (which listens to nothing else); exit handlers restore the terminal.
  const onSigterm = () => {
    status.stop();
    if (!globals.json) process.stderr.write(`Stopped following (SIGTERM); the task goes on. Resume with: mcp-tasks watch ${taskId}\n`);
    process.exit(EXIT_TERMINATED);
  };
  process.on('SIGINT', onSigint);
  process.on('SIGTERM', onSigterm);
  try {
    let next: Pick<DetailedTask, 'taskId'> & Partial<DetailedTask> = handle;
    for (;;) {
      let outcome: FollowOutcome;
      try {
        outcome = await client.follow(next, {
          signal: controller.signal,
          onUpdate: (task) => {
            const forApprovers = approvers.update(task);
            status.update(task, answeredHere(task, input.given) ?? forApprovers);
          },
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
    process.off('SIGTERM', onSigterm);
  }
}

/**
 * Says once, for each new set of them, that a task's open questions are for
 * an approver other than the caller (four eyes: the server refuses the
 * caller's answer), and where they decide: the task's page.
 */
class ApproverNotice {
  #told = '';

  constructor(
    private readonly taskId: string,
    private readonly globals: GlobalOptions,
  ) {}

  /** The status to show while only approvers' questions are open (`undefined`: the server's words). */
  update(task: DetailedTask): string | undefined {
    if (task.status !== 'input_required') return undefined;
    const { yours, approvers } = splitQuestions(task.inputRequests ?? {});
    if (approvers.length === 0) return undefined;
    const keys = approvers.join(', ');
    if (keys !== this.#told && !this.globals.json) {
      process.stderr.write(
        `${keys} must be decided by an approver other than you (you started the task), on its page: ` +
          `${taskPage(this.globals, this.taskId)}\nFollowing the task to its end.\n`,
      );
    }
    this.#told = keys;
    return Object.keys(yours).length > 0 ? undefined : `input_required: waiting for an approver to decide ${keys}`;
  }
}

/**
 * The status shown for a task waiting on questions this CLI answers itself
 * from the given answers: not the server's "waiting for a person", which is
 * meant for those who would have to answer. `undefined`: the server's words.
 */
function answeredHere(task: DetailedTask, given: GivenAnswers): string | undefined {
  const { yours } = splitQuestions(task.inputRequests ?? {});
  if (task.status !== 'input_required' || !given.covers(yours)) return undefined;
  return `input_required: answering ${Object.keys(yours).join(', ')} from the given answers`;
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

/**
 * What a task waits for: each open question, and how to answer those that
 * are the caller's; a four-eyes one is marked as an approver's to decide
 * on the page, with no command offered for it (the server would refuse it).
 */
export function describeInput(taskId: string, requests: Record<string, InputRequest>, globals: GlobalOptions): void {
  const { yours, approvers } = splitQuestions(requests);
  process.stderr.write(`Task ${taskId} waits for input (its page: ${taskPage(globals, taskId)}):\n`);
  for (const [key, request] of Object.entries(requests)) {
    const message = typeof request.params?.['message'] === 'string' ? request.params['message'] : request.method;
    const schema = request.params?.['requestedSchema'];
    const whose = approvers.includes(key) ? ' (an approver other than you decides it, on its page)' : '';
    process.stderr.write(`  ${key}: ${message}${whose || (schema ? ` ${JSON.stringify(schema)}` : '')}\n`);
  }
  if (Object.keys(yours).length > 0)
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
  if (task.status === 'input_required') {
    const { approvers } = splitQuestions(task.inputRequests ?? {});
    for (const [key, request] of Object.entries(task.inputRequests ?? {})) {
      const whose = approvers.includes(key) ? ' (an approver other than you decides it, on its page)' : '';
      lines.push(`waiting for ${key}: ${String(request.params?.['message'] ?? request.method)}${whose}`);
    }
  }
  process.stdout.write(`${lines.join('\n')}\n`);
}

/** How long `cancel` waits for the task to end before it prints its state: a running task stops at its worker's next check. */
const CANCEL_WAIT_MS = 15_000;

/**
 * The task after a cancel was acknowledged: once it has ended, or as it is
 * after {@link CANCEL_WAIT_MS} (a cancel is cooperative: the task may end
 * later, or even otherwise).
 */
export async function settled(client: TasksClient, taskId: string): Promise<DetailedTask> {
  const deadline = Date.now() + CANCEL_WAIT_MS;
  for (;;) {
    const task = await client.getTask(taskId);
    if (isTerminal(task.status) || Date.now() >= deadline) return task;
    await delay(Math.min(Math.max(task.pollIntervalMs ?? 500, 100), 1000));
  }
}

/**
 * What `cancel` prints: the task as it ended, or, while it has not ended yet,
 * that the cancellation is under way (not the message it had before, which
 * no longer holds).
 */
export function printCancelled(task: DetailedTask, globals: GlobalOptions): void {
  if (globals.json || isTerminal(task.status)) {
    printTask(task, globals);
    return;
  }
  process.stdout.write(
    `${task.taskId}  ${task.status}  Cancellation requested: the task stops at its next check (follow with: mcp-tasks watch ${task.taskId})\n`,
  );
}
