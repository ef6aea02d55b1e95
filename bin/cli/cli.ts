/**
 * `mcp-tasks`: call a tool on any MCP Tasks endpoint and follow its task to
 * the end, or get, watch, answer and cancel a task by id.
 *
 *   mcp-tasks call approval_gate '{"action":"deploy"}'            interactive on a terminal
 *   mcp-tasks call approval_gate '{"action":"deploy"}' --answer approval.approve=true --json
 *   mcp-tasks watch <taskId> | get <taskId> | answer <taskId> … | cancel <taskId> | tools
 *   mcp-tasks ops inspect <taskId> | working | waiting | cancel | fail | redrive   (operators)
 *   mcp-tasks login [--client-credentials] | logout                  OAuth, per endpoint
 *
 * The endpoint is `--url` or `MCP_TASKS_URL` (default the local stack), the
 * bearer token `--token` or `MCP_TASKS_TOKEN`, else the one `login` keeps. Exit codes: 0 done, 1 the
 * tool or task failed (or was cancelled) or a request failed, 2 usage, 3 the
 * task waits for input that was not given (answer it later by id).
 */
import { readFileSync } from 'node:fs';
import { select } from '@inquirer/prompts';
import { Command, CommanderError, Option } from 'commander';
import ora, { type Ora } from 'ora';
import { DeploymentLinks } from '../../shared/links.ts';
import { opsCommand } from '../ops/cli.ts';
import { GivenAnswers } from './answers.ts';
import { type FollowOutcome, type InputRequest, type InputResponses, McpError, resultText, type Task, TasksClient } from './client.ts';
import {
  currentToken,
  DEFAULT_CALLBACK_PORT,
  LoginStore,
  loginInBrowser,
  loginWithClientCredentials,
  openBrowser,
  type StoredLogin,
} from './login.ts';
import { isPromptInterrupt, promptForInput } from './prompts.ts';

const DEFAULT_URL = 'http://127.0.0.1:3000/mcp';
const EXIT_FAILED = 1;
const EXIT_NEEDS_INPUT = 3;

interface GlobalOptions {
  url: string;
  token?: string;
  json?: boolean;
}

interface AnswerOptions {
  answer: string[];
  answersFile?: string;
  input: boolean;
}

/** Thrown to end the command with an exit code (the message, if any, already printed). */
class Exit extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

export function buildProgram(): Command {
  const program = new Command('mcp-tasks')
    .description('Call tools on an MCP Tasks server and follow their tasks')
    .addOption(new Option('--url <url>', 'MCP endpoint').env('MCP_TASKS_URL').default(DEFAULT_URL))
    .addOption(new Option('--token <token>', 'bearer token').env('MCP_TASKS_TOKEN'))
    .option('--json', 'print the final result or task as JSON on stdout, nothing else')
    .showHelpAfterError()
    .exitOverride();

  const answerOptions = (command: Command) =>
    command
      .option('--answer <key.field=value>', 'an answer to an input request (repeatable); key=decline or key=cancel refuses it', collect, [])
      .option('--answers-file <path>', 'answers as JSON: { "<key>": { "action": "accept", "content": { … } } }')
      .option('--no-input', 'never prompt: stop (exit 3) when the task needs input that was not given');

  answerOptions(
    program
      .command('call')
      .description('call a tool; if it runs as a task, follow it to its end')
      .argument('<tool>', 'tool name')
      .argument('[arguments]', 'tool arguments as a JSON object', '{}')
      .option('--args-file <path>', 'read the tool arguments (a JSON object) from a file')
      .option('--idempotency-key <key>', 'retrying with the same key returns the same task')
      .option('--detach', 'print the task and return at once instead of following it'),
  ).action(
    async (
      tool: string,
      json: string,
      options: AnswerOptions & { argsFile?: string; idempotencyKey?: string; detach?: boolean },
      command: Command,
    ) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = await makeClient(globals);
      const args = parseObject(options.argsFile === undefined ? json : readFileSync(options.argsFile, 'utf8'), 'tool arguments');
      const given = GivenAnswers.parse(options.answer, options.answersFile);
      const onInput = inputHandler(given, options.input, globals);
      const outcome = await client.callTool(tool, args, {
        ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
        onInput,
      });
      if (outcome.kind === 'result') return printResult(outcome.result, globals);
      if (options.detach) return printTask(outcome.task, globals);
      if (!globals.json) {
        const { taskId } = outcome.task;
        process.stderr.write(`Task ${taskId} (resume with: mcp-tasks watch ${taskId}; its page: ${taskPage(globals, taskId)})\n`);
      }
      await followToEnd(client, outcome.task, onInput, globals, options.input);
    },
  );

  answerOptions(program.command('watch').description('follow a task to its end').argument('<taskId>')).action(
    async (taskId: string, options: AnswerOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = await makeClient(globals);
      const onInput = inputHandler(GivenAnswers.parse(options.answer, options.answersFile), options.input, globals);
      if (!globals.json) process.stderr.write(`Task ${taskId} (its page: ${taskPage(globals, taskId)})\n`);
      await followToEnd(client, { taskId, pollIntervalMs: 0 }, onInput, globals, options.input);
    },
  );

  program
    .command('get')
    .description('print a task once')
    .argument('<taskId>')
    .action(async (taskId: string, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      printTask(await (await makeClient(globals)).getTask(taskId), globals);
    });

  answerOptions(
    program.command('answer').description('answer a waiting task (from flags or a file, or interactively)').argument('<taskId>'),
  ).action(async (taskId: string, options: AnswerOptions, command: Command) => {
    const globals = command.optsWithGlobals<GlobalOptions>();
    const client = await makeClient(globals);
    const task = await client.getTask(taskId);
    if (task.status !== 'input_required') {
      process.stderr.write(`Task ${taskId} is ${task.status}: nothing to answer\n`);
      throw new Exit(EXIT_FAILED);
    }
    const answers = await inputHandler(
      GivenAnswers.parse(options.answer, options.answersFile),
      options.input,
      globals,
    )(task.inputRequests ?? {});
    if (!answers) {
      describeInput(taskId, task.inputRequests ?? {}, globals);
      throw new Exit(EXIT_NEEDS_INPUT);
    }
    await client.answer(taskId, answers);
    if (globals.json) process.stdout.write(`${JSON.stringify({ taskId, answered: Object.keys(answers) })}\n`);
    else {
      const page = taskPage(globals, taskId);
      process.stderr.write(
        `Answered ${Object.keys(answers).join(', ')} (follow with: mcp-tasks watch ${taskId}, or on its page: ${page})\n`,
      );
    }
  });

  program
    .command('cancel')
    .description('cancel a task')
    .argument('<taskId>')
    .action(async (taskId: string, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = await makeClient(globals);
      await client.cancel(taskId);
      printTask(await client.getTask(taskId), globals);
    });

  program
    .command('tools')
    .description('list the tools')
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const tools = await (await makeClient(globals)).listTools();
      if (globals.json) process.stdout.write(`${JSON.stringify(tools)}\n`);
      else for (const tool of tools) process.stdout.write(`${String(tool['name'])}\t${String(tool['description'] ?? '')}\n`);
    });

  program
    .command('login')
    .description('get an OAuth token for the endpoint (browser sign-in with PKCE, or client credentials) and keep it for later commands')
    .option('--client-credentials', 'use the client credentials grant (for scripts)')
    .addOption(
      new Option('--client-id <id>', 'a registered client (default: register one, if the server allows)').env('MCP_TASKS_CLIENT_ID'),
    )
    .addOption(
      new Option('--client-secret <secret>', 'client secret for --client-credentials (prefer the environment variable)').env(
        'MCP_TASKS_CLIENT_SECRET',
      ),
    )
    .option('--scope <scopes>', 'scopes to ask for (default: those the endpoint lists)')
    .option(
      '--callback-port <port>',
      `loopback port for the browser's answer (default ${DEFAULT_CALLBACK_PORT}; 0 picks one, with dynamic registration)`,
    )
    .option('--no-browser', 'only print the sign-in URL')
    .action(async (options: LoginOptions, command: Command) => login(command.optsWithGlobals<GlobalOptions>(), options));

  program
    .command('logout')
    .description('forget the token kept for the endpoint')
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const removed = await new LoginStore().remove(globals.url);
      process.stderr.write(removed ? `Logged out of ${globals.url}\n` : `No login kept for ${globals.url}\n`);
    });

  // Operator commands (`mcp-tasks ops …`): they read the table and queues directly.
  program.addCommand(
    opsCommand(
      (text) => void process.stdout.write(text),
      (code) => {
        if (code !== 0) throw new Exit(code);
      },
    ),
  );

  return program;
}

/** A client for the endpoint, with `--token`, else the token `login` kept for this endpoint (renewed if due). */
async function makeClient(globals: GlobalOptions): Promise<TasksClient> {
  const secret = process.env['MCP_TASKS_CLIENT_SECRET'];
  const token = globals.token ?? (await currentToken(globals.url, new LoginStore(), secret ? { clientSecret: secret } : {}));
  return new TasksClient({ url: globals.url, ...(token ? { token } : {}), clientInfo: { name: 'mcp-tasks-cli', version: '0.1.0' } });
}

interface LoginOptions {
  clientCredentials?: boolean;
  clientId?: string;
  clientSecret?: string;
  scope?: string;
  callbackPort?: string;
  browser: boolean;
}

async function login(globals: GlobalOptions, options: LoginOptions): Promise<void> {
  let result: StoredLogin;
  if (options.clientCredentials) {
    if (!options.clientId || !options.clientSecret) {
      throw new CommanderError(
        2,
        'mcp-tasks.login',
        'Client credentials need --client-id (or MCP_TASKS_CLIENT_ID) and MCP_TASKS_CLIENT_SECRET',
      );
    }
    result = await loginWithClientCredentials(globals.url, {
      clientId: options.clientId,
      clientSecret: options.clientSecret,
      ...(options.scope ? { scope: options.scope } : {}),
    });
  } else {
    const port = options.callbackPort === undefined ? DEFAULT_CALLBACK_PORT : Number(options.callbackPort);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      throw new CommanderError(2, 'mcp-tasks.login', '--callback-port must be a port number');
    result = await loginInBrowser(globals.url, {
      ...(options.clientId ? { clientId: options.clientId } : {}),
      ...(options.scope ? { scope: options.scope } : {}),
      callbackPort: port,
      open: (url) => {
        process.stderr.write(`Sign in in your browser; if it does not open, visit:\n${url}\n`);
        if (options.browser) openBrowser(url);
      },
    });
  }
  const store = new LoginStore();
  await store.put(globals.url, result);
  const summary = {
    endpoint: globals.url,
    issuer: result.issuer,
    clientId: result.clientId,
    grant: result.grant,
    scope: result.scope ?? null,
    expiresAt: result.expiresAt ?? null,
  };
  if (globals.json) process.stdout.write(`${JSON.stringify(summary)}\n`);
  else process.stderr.write(`Logged in to ${globals.url} through ${result.issuer} (token kept in ${store.file})\n`);
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function parseObject(text: string, what: string): Record<string, unknown> {
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

function interactive(globals: GlobalOptions, allowInput: boolean): boolean {
  return allowInput && !globals.json && process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/** Given answers first; otherwise a prompt on a terminal; otherwise none (the task keeps waiting). */
function inputHandler(given: GivenAnswers, allowInput: boolean, globals: GlobalOptions) {
  return async (requests: Record<string, InputRequest>): Promise<InputResponses | undefined> => {
    const fromFlags = given.answer(requests);
    if (fromFlags) return fromFlags;
    if (!interactive(globals, allowInput)) return undefined;
    return promptForInput(requests);
  };
}

/**
 * Follows a task, showing its status, until it ends, or it waits for input
 * nobody gave (exit 3), or the person detaches. Ctrl-C offers to cancel the
 * task, detach from it, or keep watching (on a terminal; elsewhere it detaches).
 */
async function followToEnd(
  client: TasksClient,
  handle: Pick<Task, 'taskId'> & Partial<Task>,
  onInput: (requests: Record<string, InputRequest>) => Promise<InputResponses | undefined>,
  globals: GlobalOptions,
  allowInput: boolean,
): Promise<void> {
  const { taskId } = handle;
  const status = new StatusLine(taskId, !globals.json, process.stderr.isTTY === true);
  let controller = new AbortController();
  const onSigint = () => controller.abort(new Interrupted());
  process.on('SIGINT', onSigint);
  try {
    let next: Pick<Task, 'taskId'> & Partial<Task> = handle;
    for (;;) {
      let outcome: FollowOutcome;
      try {
        outcome = await client.follow(next, {
          signal: controller.signal,
          onUpdate: (task) => status.update(task),
          onInput: async (requests) => {
            status.pause();
            try {
              return await onInput(requests);
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
        status.pause();
        const choice = interactive(globals, allowInput) ? await interruptChoice(taskId) : 'detach';
        if (choice === 'cancel') {
          await client.cancel(taskId);
          process.stderr.write(`Cancellation requested for ${taskId}\n`);
        } else if (choice === 'detach') {
          process.stderr.write(`Detached; the task goes on. Resume with: mcp-tasks watch ${taskId}\n`);
          return;
        }
        controller = new AbortController();
        next = { taskId, pollIntervalMs: 0 };
        status.resume();
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

  update(task: Task): void {
    this.#text = `${task.status}${task.statusMessage ? `: ${task.statusMessage}` : ''}`;
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
function taskPage(globals: GlobalOptions, taskId: string): string {
  const url = new URL(globals.url);
  const base = url.pathname.endsWith('/mcp') ? `${url.origin}${url.pathname.slice(0, -'/mcp'.length)}` : url.origin;
  return new DeploymentLinks(base).taskPage(taskId)!;
}

function describeInput(taskId: string, requests: Record<string, InputRequest>, globals: GlobalOptions): void {
  process.stderr.write(`Task ${taskId} waits for input (its page: ${taskPage(globals, taskId)}):\n`);
  for (const [key, request] of Object.entries(requests)) {
    const message = typeof request.params?.['message'] === 'string' ? request.params['message'] : request.method;
    const schema = request.params?.['requestedSchema'];
    process.stderr.write(`  ${key}: ${message}${schema ? ` ${JSON.stringify(schema)}` : ''}\n`);
  }
  process.stderr.write(`Answer on its page, or with: mcp-tasks answer ${taskId} --answer <key>.<field>=<value>\n`);
}

function finish(task: Task, globals: GlobalOptions): void {
  if (globals.json) printTask(task, globals);
  else if (task.status === 'completed') process.stdout.write(`${resultText(task.result) || JSON.stringify(task.result)}\n`);
  else if (task.status === 'failed') process.stderr.write(`Task ${task.taskId} failed: ${task.error?.message ?? 'no reason given'}\n`);
  else process.stderr.write(`Task ${task.taskId} was cancelled\n`);
  const ok = task.status === 'completed' && task.result?.['isError'] !== true;
  if (!ok) {
    if (!globals.json && task.status === 'completed') process.stderr.write('The tool reported an error\n');
    throw new Exit(EXIT_FAILED);
  }
}

function printResult(result: Record<string, unknown>, globals: GlobalOptions): void {
  process.stdout.write(globals.json ? `${JSON.stringify(result)}\n` : `${resultText(result) || JSON.stringify(result)}\n`);
  if (result['isError'] === true) throw new Exit(EXIT_FAILED);
}

function printTask(task: Task, globals: GlobalOptions): void {
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

/** Runs the CLI with `argv` (as `process.argv`) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof Exit) return error.code;
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof McpError) process.stderr.write(`Error ${error.code}: ${error.message}\n`);
    else process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}
