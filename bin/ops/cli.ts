/**
 * `mcp-tasks ops <command> [options]` (also `npm run ops -- …`): the operator
 * commands of `ops.ts`, a command group of the `mcp-tasks` CLI.
 *
 *   inspect <taskId>                   row, steps, attempts, lease, next sweep
 *   trace <taskId>                     the task's life as a waterfall: phases, durations, who answered
 *   working [--limit N]                working tasks, oldest first
 *   waiting [--older-than 1h]          tasks waiting for input at least that long
 *   cancel <taskId> --reason "…"       cancel as operator
 *   fail <taskId> --reason "…"         end failed as operator (not while a worker runs it)
 *   redrive [--limit N]                move dead-lettered messages back to the task queue
 *
 * Where: `--outputs <file>`, the outputs of `cdk deploy --outputs-file <file>`
 * (default `cdk-outputs.json`) or the `outputs.json` the local stack writes
 * in its data directory (`.data/outputs.json` for `npm start`), which also
 * names the emulators' endpoints. Credentials and region come from the usual
 * AWS chain (environment, profile, SSO, instance role). `--json` prints
 * machine-readable output; the default is a table for people.
 */
import { Command } from 'commander';
import type { OpsOptions } from './execute.ts';

/**
 * The `ops` command group. Each command's exit code goes to `exit` (0 done,
 * 1 nothing found or changed); `write` receives the output.
 */
export function opsCommand(write: (text: string) => void, exit: (code: number) => void): Command {
  const group = new Command('ops')
    .description('operator commands: look inside a deployment or the local stack (AWS credentials from the usual chain)')
    .option(
      '--outputs <file>',
      "stack outputs: `cdk deploy --outputs-file` or the local stack's <dataDir>/outputs.json",
      'cdk-outputs.json',
    )
    .option('--stack <name>', 'the stack in the outputs file (default: the one with the task table)')
    .option('--json', 'machine-readable output');
  const action =
    (name: string) =>
    async (...args: unknown[]) => {
      const command = args.at(-1) as Command;
      const taskId = typeof args[0] === 'string' ? args[0] : undefined;
      // The AWS clients load only when an operator command runs, not with every `mcp-tasks` command.
      const { execute } = await import('./execute.ts');
      exit(await execute(name, taskId, command.optsWithGlobals<OpsOptions>(), write));
    };
  group.command('inspect').description('row, steps, attempts, lease, next sweep').argument('<taskId>').action(action('inspect'));
  group
    .command('trace')
    .description("the task's life as a waterfall: phases in order, durations and shares, who answered, retries and recoveries")
    .argument('<taskId>')
    .action(action('trace'));
  group
    .command('working')
    .description('working tasks, oldest first')
    .option('--limit <n>', 'at most this many', '50')
    .action(action('working'));
  group
    .command('waiting')
    .description('tasks waiting for input at least this long')
    .option('--older-than <duration>', 'e.g. 90s, 15m, 2h, 7d', '0')
    .option('--limit <n>', 'at most this many', '50')
    .action(action('waiting'));
  group
    .command('cancel')
    .description('cancel a task as operator')
    .argument('<taskId>')
    .option('--reason <text>', 'why (recorded on the task)')
    .action(action('cancel'));
  group
    .command('fail')
    .description('end a task failed as operator (not while a worker runs it)')
    .argument('<taskId>')
    .option('--reason <text>', 'why (recorded on the task)')
    .action(action('fail'));
  group
    .command('redrive')
    .description('move dead-lettered messages back to the task queue')
    .option('--limit <n>', 'at most this many', '50')
    .action(action('redrive'));
  return group;
}

/** Runs one operator command from its arguments (`inspect <taskId> --outputs …`); returns the exit code. */
export async function runOps(argv: string[], write: (text: string) => void = (text) => void process.stdout.write(text)): Promise<number> {
  let code = 0;
  await opsCommand(write, (exitCode) => (code = exitCode))
    .exitOverride()
    .parseAsync(argv, { from: 'user' });
  return code;
}
