/**
 * `npm run ops -- <command> [options]`: the operator commands of `ops.ts`.
 *
 *   inspect <taskId>                   row, steps, attempts, lease, next sweep
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
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { loadConfig } from '../config.ts';
import { humanMs, Ops, table, type TaskSummary } from './ops.ts';
import { LOCAL_OUTPUTS, OPS_OUTPUTS } from './outputs.ts';


interface Parsed {
  command: string | undefined;
  positional: string[];
  flags: Record<string, string | true>;
}

function parse(argv: string[]): Parsed {
  const flags: Record<string, string | true> = {};
  const positional: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i]!;
    if (!arg.startsWith('--')) positional.push(arg);
    else if (arg === '--json') flags['json'] = true;
    else flags[arg.slice(2)] = argv[++i] ?? '';
  }
  return { command: positional.shift(), positional, flags };
}

/** `90s`, `15m`, `2h`, `7d`, or milliseconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(text.trim());
  if (!match) throw new Error(`Not a duration: "${text}" (e.g. 90s, 15m, 2h, 7d)`);
  const size = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] ?? 'ms']!;
  return Math.round(Number(match[1]) * size);
}

/** The outputs of one stack in a CDK outputs file (`{ "<stack>": { "<output>": "<value>" } }`). */
async function stackOutputs(file: string, stack: string | undefined): Promise<Record<string, string>> {
  const all = JSON.parse(await readFile(file, 'utf8')) as Record<string, Record<string, string>>;
  const name = stack ?? Object.keys(all).find((key) => OPS_OUTPUTS.tableName in (all[key] ?? {}));
  const outputs = name === undefined ? undefined : all[name];
  if (!outputs) throw new Error(`${file} has no stack${stack ? ` "${stack}"` : ''} with an ${OPS_OUTPUTS.tableName} output (deploy this version of the stack first)`);
  return outputs;
}

/** Runs one command; returns the exit code. `write` receives the output. */
export async function runOps(argv: string[], write: (text: string) => void = (text) => void process.stdout.write(text)): Promise<number> {
  const { command, positional, flags } = parse(argv);
  const json = flags['json'] === true;
  const flag = (name: string) => (typeof flags[name] === 'string' ? (flags[name] as string) : undefined);
  const out = (value: unknown, text: () => string) => write(`${json ? JSON.stringify(value, null, 2) : text()}\n`);
  if (!command || command === 'help') {
    write('usage: npm run ops -- inspect <taskId> | working | waiting [--older-than 1h] | cancel <taskId> --reason … | fail <taskId> --reason … | redrive  [--outputs file] [--stack name] [--json]\n');
    return command ? 0 : 2;
  }

  const outputs = await stackOutputs(flag('outputs') ?? 'cdk-outputs.json', flag('stack'));
  const required = (key: string) => {
    const value = outputs[key];
    if (!value) throw new Error(`The stack outputs lack ${key}`);
    return value;
  };
  const region = outputs[LOCAL_OUTPUTS.region];
  const local = outputs[LOCAL_OUTPUTS.dynamodbEndpoint] !== undefined;
  const credentials = local ? { accessKeyId: 'local', secretAccessKey: 'local' } : undefined;
  const dynamodb = new DynamoDBClient({ ...(region ? { region } : {}), ...(local ? { endpoint: outputs[LOCAL_OUTPUTS.dynamodbEndpoint], credentials } : {}) });
  const sqs = new SQSClient({ useQueueUrlAsEndpoint: false, ...(region ? { region } : {}), ...(local ? { endpoint: outputs[LOCAL_OUTPUTS.sqsEndpoint], credentials } : {}) });
  const config = loadConfig({ ...process.env, TASKS_TABLE_NAME: required(OPS_OUTPUTS.tableName), TASKS_QUEUE_URL: required(OPS_OUTPUTS.queueUrl) });
  const ops = new Ops({ dynamodb, sqs, tableName: config.tableName, queueUrl: config.queueUrl, deadLetterQueueUrl: required(OPS_OUTPUTS.deadLetterQueueUrl), policy: config });
  const limit = Number(flag('limit') ?? 50);
  const reason = () => {
    const text = flag('reason');
    if (!text) throw new Error(`${command} needs --reason "<why>"`);
    return text;
  };
  const taskId = () => {
    const id = positional[0];
    if (!id) throw new Error(`${command} needs a task id`);
    return id;
  };
  const summaries = (tasks: TaskSummary[]) =>
    table(
      tasks.map((t) => ({ ...t, age: humanMs(t.ageMs), waiting: t.waitingMs === undefined ? undefined : humanMs(t.waitingMs), running: t.running ? 'yes' : 'no' })),
      ['taskId', 'tool', 'age', ...(tasks.some((t) => t.waitingMs !== undefined) ? ['waiting'] : []), 'attempts', 'running', 'nextSweepAt'],
    );

  try {
    switch (command) {
      case 'inspect': {
        const found = await ops.inspect(taskId());
        if (!found) {
          out({ taskId: taskId(), found: false }, () => `No task ${taskId()}`);
          return 1;
        }
        out(found, () =>
          table(
            Object.entries({
              ...found,
              ageMs: humanMs(found.ageMs),
              ttlMs: humanMs(found.ttlMs),
              lease: found.lease ? `${found.lease.owner} until ${found.lease.until} (${found.lease.live ? 'live' : 'expired'})` : undefined,
              nextSweep: found.nextSweep ? `${found.nextSweep.at} (in ${humanMs(found.nextSweep.inMs)}): ${found.nextSweep.action}` : undefined,
              waitingForInput: found.waitingForInput?.join(', '),
              steps: found.steps.length === 0 ? '(none)' : found.steps.join(', '),
            })
              .filter(([, value]) => value !== undefined)
              .map(([field, value]) => ({ field, value })),
            ['field', 'value'],
          ),
        );
        return 0;
      }
      case 'working': {
        const tasks = await ops.working(limit);
        out(tasks, () => summaries(tasks));
        return 0;
      }
      case 'waiting': {
        const tasks = await ops.waiting(parseDuration(flag('older-than') ?? '0'), limit);
        out(tasks, () => summaries(tasks));
        return 0;
      }
      case 'cancel':
      case 'fail': {
        const result = command === 'cancel' ? await ops.cancel(taskId(), reason()) : await ops.fail(taskId(), reason());
        out(result, () => `${result.taskId}: ${result.outcome}${result.reason ? ` (${result.reason})` : ''}`);
        return result.outcome === 'unchanged' ? 1 : 0;
      }
      case 'redrive': {
        const result = await ops.redrive(limit);
        out(result, () => `Moved ${result.moved} message(s) back to the task queue${result.moved ? `: ${result.taskIds.join(', ')}` : ''}`);
        return 0;
      }
      default:
        throw new Error(`Unknown command "${command}"`);
    }
  } finally {
    dynamodb.destroy();
    sqs.destroy();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  runOps(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(2);
    },
  );
}
