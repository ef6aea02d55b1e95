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
 * bearer token `--token` or `MCP_TASKS_TOKEN`, else the one `login` keeps.
 * Requests the transport fails are retried for `--retry-for` seconds (30).
 * Exit codes (`command.ts`): 0 done, 1 the tool or task failed (or was
 * cancelled) or the server refused a request, 2 usage, 3 the task waits for
 * input that was not given (answer it later by id), 4 the endpoint could not
 * be reached, 143 SIGTERM stopped following a task (which goes on).
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { opsCommand } from '../ops/cli.ts';
import { projectCommands } from '../project/commands.ts';
import { GivenAnswers } from './answers.ts';
import { McpError, splitQuestions } from './client.ts';
import {
  type AnswerOptions,
  collect,
  DEFAULT_RETRY_FOR_SECONDS,
  DEFAULT_URL,
  EXIT_FAILED,
  EXIT_NEEDS_INPUT,
  EXIT_UNREACHABLE,
  EXIT_USAGE,
  Exit,
  type GlobalOptions,
  inputHandler,
  makeClient,
  parseObject,
  parseSeconds,
} from './command.ts';
import { describeInput, followToEnd, printCancelled, printResult, printTask, settled, taskPage } from './follow.ts';
import { DEFAULT_CALLBACK_PORT } from './login.ts';
import { type LoginOptions, login } from './login-command.ts';
import { LoginStore } from './login-store.ts';
import { Unreachable } from './transport.ts';

function buildProgram(): Command {
  const program = new Command('mcp-tasks')
    .description('Call tools on an MCP Tasks server and follow their tasks')
    .addOption(new Option('--url <url>', 'MCP endpoint').env('MCP_TASKS_URL').default(DEFAULT_URL))
    .addOption(new Option('--token <token>', 'bearer token').env('MCP_TASKS_TOKEN'))
    .option('--json', 'print the final result or task as JSON on stdout, nothing else')
    .option(
      '--retry-for <seconds>',
      'how long to retry requests that could not reach the endpoint (then exit 4)',
      parseSeconds,
      DEFAULT_RETRY_FOR_SECONDS,
    )
    .showHelpAfterError()
    .exitOverride();
  addCall(program);
  addWatch(program);
  addGet(program);
  addAnswer(program);
  addCancel(program);
  addTools(program);
  addLogin(program);
  addLogout(program);
  // A project's commands (`mcp-tasks start | dev | init`): the package's local stack and scaffold.
  for (const command of projectCommands()) program.addCommand(command);
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

/** The options of the commands that answer questions: given answers, and whether a person may be asked. */
function withAnswerOptions(command: Command): Command {
  return command
    .option('--answer <key.field=value>', 'an answer to an input request (repeatable); key=decline or key=cancel refuses it', collect, [])
    .option('--answers-file <path>', 'answers as JSON: { "<key>": { "action": "accept", "content": { … } } }')
    .option('--no-input', 'never prompt: stop (exit 3) when the task needs input that was not given');
}

type CallOptions = AnswerOptions & { argsFile?: string; idempotencyKey?: string; detach?: boolean };

/**
 * `call`: calls a tool and follows its task. It always sends an idempotency
 * key (a random one unless given), so that a retried first request returns the
 * task the lost one created.
 */
function addCall(program: Command): void {
  withAnswerOptions(
    program
      .command('call')
      .description('call a tool; if it runs as a task, follow it to its end')
      .argument('<tool>', 'tool name')
      .argument('[arguments]', 'tool arguments as a JSON object', '{}')
      .option('--args-file <path>', 'read the tool arguments (a JSON object) from a file')
      .option('--idempotency-key <key>', 'calling again with the same key returns the same task (default: a random key per call)')
      .option('--detach', 'print the task and return at once instead of following it'),
  ).action(async (tool: string, json: string, options: CallOptions, command: Command) => {
    const globals = command.optsWithGlobals<GlobalOptions>();
    const client = await makeClient(globals);
    const args = parseObject(options.argsFile === undefined ? json : readFileSync(options.argsFile, 'utf8'), 'tool arguments');
    const given = GivenAnswers.parse(options.answer, options.answersFile);
    const onInput = inputHandler(given, options.input, globals);
    const outcome = await client.callTool(tool, args, { idempotencyKey: options.idempotencyKey ?? randomUUID(), onInput });
    if (outcome.kind === 'result') return printResult(outcome.result, globals);
    if (options.detach) return printTask(outcome.task, globals);
    if (!globals.json) {
      const { taskId } = outcome.task;
      process.stderr.write(`Task ${taskId} (resume with: mcp-tasks watch ${taskId}; its page: ${taskPage(globals, taskId)})\n`);
    }
    await followToEnd(client, outcome.task, { onInput, allowInput: options.input, given }, globals);
  });
}

function addWatch(program: Command): void {
  withAnswerOptions(program.command('watch').description('follow a task to its end').argument('<taskId>')).action(
    async (taskId: string, options: AnswerOptions, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = await makeClient(globals);
      const given = GivenAnswers.parse(options.answer, options.answersFile);
      const onInput = inputHandler(given, options.input, globals);
      if (!globals.json) process.stderr.write(`Task ${taskId} (its page: ${taskPage(globals, taskId)})\n`);
      await followToEnd(client, { taskId, pollIntervalMs: 0 }, { onInput, allowInput: options.input, given }, globals);
    },
  );
}

function addGet(program: Command): void {
  program
    .command('get')
    .description('print a task once')
    .argument('<taskId>')
    .action(async (taskId: string, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      printTask(await (await makeClient(globals)).getTask(taskId), globals);
    });
}

function addAnswer(program: Command): void {
  withAnswerOptions(
    program.command('answer').description('answer a waiting task (from flags or a file, or interactively)').argument('<taskId>'),
  ).action(async (taskId: string, options: AnswerOptions, command: Command) => {
    const globals = command.optsWithGlobals<GlobalOptions>();
    const client = await makeClient(globals);
    const task = await client.getTask(taskId);
    if (task.status !== 'input_required') {
      process.stderr.write(`Task ${taskId} is ${task.status}: nothing to answer\n`);
      throw new Exit(EXIT_FAILED);
    }
    const { yours, approvers } = splitQuestions(task.inputRequests ?? {});
    if (Object.keys(yours).length === 0) {
      // Four eyes: the server refuses the caller's answer, so none is asked for.
      process.stderr.write(
        `Task ${taskId}: ${approvers.join(', ')} must be decided by an approver other than you (you started the task), ` +
          `on its page: ${taskPage(globals, taskId)}\n`,
      );
      throw new Exit(EXIT_FAILED);
    }
    const given = GivenAnswers.parse(options.answer, options.answersFile);
    const answers = await inputHandler(given, options.input, globals)(yours);
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
}

function addCancel(program: Command): void {
  program
    .command('cancel')
    .description('cancel a task')
    .argument('<taskId>')
    .action(async (taskId: string, _options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const client = await makeClient(globals);
      await client.cancel(taskId);
      printCancelled(await settled(client, taskId), globals);
    });
}

function addTools(program: Command): void {
  program
    .command('tools')
    .description('list the tools')
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const tools = await (await makeClient(globals)).listTools();
      if (globals.json) process.stdout.write(`${JSON.stringify(tools)}\n`);
      else for (const tool of tools) process.stdout.write(`${String(tool['name'])}\t${String(tool['description'] ?? '')}\n`);
    });
}

function addLogin(program: Command): void {
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
}

function addLogout(program: Command): void {
  program
    .command('logout')
    .description('forget the token kept for the endpoint')
    .action(async (_options: unknown, command: Command) => {
      const globals = command.optsWithGlobals<GlobalOptions>();
      const removed = await new LoginStore().remove(globals.url);
      process.stderr.write(removed ? `Logged out of ${globals.url}\n` : `No login kept for ${globals.url}\n`);
    });
}

/** Runs the CLI with `argv` (as `process.argv`) and returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv);
    return 0;
  } catch (error) {
    if (error instanceof Exit) return error.code;
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : EXIT_USAGE;
    if (error instanceof Unreachable) {
      process.stderr.write(`Error: ${error.message}\n`);
      return EXIT_UNREACHABLE;
    }
    if (error instanceof McpError) process.stderr.write(`Error ${error.code}: ${error.message}\n`);
    else process.stderr.write(`Error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_FAILED;
  }
}
