/**
 * `npm run capacity -- --tasks-per-second N`: what the deployed stack needs
 * for a workload, from the capacity model (`infra/capacity.ts`): requests a
 * second per component, concurrency per function, the first limit reached and
 * the settings that move it, the settings that serve the workload, and the
 * monthly cost at list prices. `--docs-table` prints the table of
 * `docs/capacity.md` (10, 100 and 1,000 tasks a second).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command, InvalidArgumentError } from 'commander';
import {
  type CapacityReport,
  capacity,
  type Deployment,
  defaultDeployment,
  referenceWorkload,
  unfinishedCapOf,
} from '../../infra/capacity.ts';
import { contextFlags, quotaRequests, settingsFor } from '../../infra/capacity-settings.ts';
import { slotItemBytes, unfinishedPerOwner, type Workload } from '../../infra/per-task.ts';
import { REFERENCE_WORKLOAD, throttleFor } from '../../infra/sizing.ts';

const number =
  (min: number, max = Number.POSITIVE_INFINITY) =>
  (raw: string): number => {
    const value = Number(raw);
    if (!Number.isFinite(value) || value < min || value > max) throw new InvalidArgumentError(`expected a number from ${min} to ${max}`);
    return value;
  };

const onOrOff = (raw: string): string => {
  if (raw !== 'on' && raw !== 'off') throw new InvalidArgumentError('expected on or off');
  return raw;
};

const round = (value: number, digits = 1) => (value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(digits));
const usd = (value: number) => `$${value >= 100 ? Math.round(value).toLocaleString('en-US') : value.toFixed(2)}`;
const percent = (value: number) => `${Math.round(value * 100)}%`;

/** The report of one workload, as Markdown-ish text. */
function formatReport(report: CapacityReport, suggested: Deployment): string {
  const { workload: w, perTask: t, rates, concurrency: c, deployment: d } = report;
  const lines = [
    `Workload: ${w.tasksPerSecond} tasks/s, ${w.taskSeconds} s of work each, ${w.pollsPerTask} polls, ${w.inputRounds} input round(s), ` +
      `${w.steps} step(s), ${percent(w.waitingShare)} of calls waiting in the request`,
    `Deployment: throttle ${d.throttleRateLimit}/s (burst ${d.throttleBurstLimit}), workerMaxConcurrency ${d.workerMaxConcurrency}, ` +
      `activeIndexShards ${d.activeIndexShards}; account: ${d.accountConcurrency} Lambda executions, ${d.apiQuota} API requests/s`,
    '',
    `Per task: ${t.apiRequests} API requests, ${t.ddbWrites} DynamoDB writes (${t.tableWcu} WCU + ${t.indexWcu} index WCU), ` +
      `${t.ddbReads} reads (${t.rcu} RCU), ${t.sqsRequests} SQS requests, ${t.workerRuns} worker run(s), ${t.events} lifecycle event(s)`,
    ...conditionLines(report),
    '',
    '| component | per second |',
    '|---|--:|',
    `| API requests (HTTP API → MCP function) | ${round(rates.apiRequests)} |`,
    `| worker runs | ${round(rates.workerRuns)} |`,
    `| DynamoDB writes (table WCU) | ${round(rates.ddbWrites)} (${round(rates.tableWcu)}) |`,
    `| DynamoDB reads (RCU) | ${round(rates.ddbReads)} (${round(rates.rcu)}) |`,
    `| index WCU per shard (key \`activeShard\`, ${d.activeIndexShards} shards) | ${round(rates.indexWcuPerShard)} |`,
    `| SQS requests | ${round(rates.sqsRequests)} |`,
    `| EventBridge PutEvents (one event each) | ${round(rates.events)} |`,
    '',
    `Concurrency: MCP function ${round(c.mcp)}, worker ${round(c.workerInvocations)} invocations (${round(c.workerRecords)} tasks at ` +
      `once), all functions ${round(c.total)}`,
    '',
    '| limit | demand | capacity | used | moved by |',
    '|---|--:|--:|--:|---|',
    ...report.limits.map(
      (limit) =>
        `| ${limit.name} | ${round(limit.demand)} ${limit.unit} | ${round(limit.capacity)} | ${percent(limit.utilisation)} | ` +
        `${limit.moveWith} |`,
    ),
    '',
    report.firstReached
      ? `First limit reached: ${report.firstReached.name} (${percent(report.firstReached.utilisation)}); move it with ` +
        `${report.firstReached.moveWith}.`
      : `No limit reached: the busiest is ${report.limits[0]!.name} at ${percent(report.limits[0]!.utilisation)}; this deployment ` +
        `serves up to ${round(report.maxTasksPerSecond)} tasks/s of this shape.`,
    `Sweeper: re-enqueues up to ${report.sweepPerRun.toLocaleString('en-US')} stuck tasks per run.`,
    '',
    `Monthly cost (30 days, list prices, us-east-1): ${usd(report.monthlyUsd.total)} — DynamoDB ${usd(report.monthlyUsd.dynamodb)}, ` +
      `Lambda ${usd(report.monthlyUsd.lambda)}, HTTP API ${usd(report.monthlyUsd.api)}, SQS ${usd(report.monthlyUsd.sqs)}, logs ` +
      `${usd(report.monthlyUsd.logs)}, events ${usd(report.monthlyUsd.events)}, sweeper ${usd(report.monthlyUsd.sweeper)}`,
  ];
  const flags = contextFlags(suggested);
  const quotas = quotaRequests(suggested);
  const quota = quotas.length ? `; quota increases: ${quotas.join(', ')}` : '';
  lines.push(`Settings that serve it with 25% headroom: ${flags.length ? flags.join(' ') : 'the defaults'}${quota}`);
  return lines.join('\n');
}

/** What the per-task counts depend on, and what each condition adds: the list index, the cap on unfinished tasks, approvers. */
function conditionLines(report: CapacityReport): string[] {
  const { deployment: d, workload: w } = report;
  const cap = unfinishedCapOf(d);
  const slotWcu = cap === undefined ? 0 : Math.ceil(slotItemBytes(unfinishedPerOwner(w, cap)) / 1024);
  return [
    d.listed
      ? '  of which 1 index WCU: the list entry written at creation (a console lists tasks)'
      : '  not listed (no console lists tasks here): where one does (--listed on), 1 index WCU more',
    cap === undefined
      ? '  no cap on unfinished tasks (an open endpoint): with one (--issuer on: 100 by default), 2 writes more'
      : `  of which 2 writes of ${slotWcu} WCU: the cap on unfinished tasks (${cap} per principal` +
        `${d.maxUnfinishedTasks === undefined ? ', the default with an issuer' : ''}; the principal's set holds about ` +
        `${unfinishedPerOwner(w, cap)} ids)`,
    ...(d.approvals ? ["  of which 2 writes and 2 index WCU per question for a person: the approvers' list"] : []),
  ];
}

/** The table of `docs/capacity.md`: the reference workload at 10, 100 and 1,000 tasks/s. */
export function docsTable(loads: readonly number[] = [10, 100, 1000]): string {
  const rows = loads.map((tasksPerSecond) => {
    const workload = referenceWorkload(tasksPerSecond);
    const onDefaults = capacity(workload);
    const suggested = settingsFor(workload);
    const report = capacity(workload, suggested);
    const flags = contextFlags(suggested);
    const quotas = quotaRequests(suggested);
    const quota = quotas.length ? `; quotas: ${quotas.join(', ')}` : '';
    const first = onDefaults.firstReached ? `${onDefaults.firstReached.name} (${percent(onDefaults.firstReached.utilisation)})` : 'none';
    return (
      `| ${tasksPerSecond.toLocaleString('en-US')} | ${round(report.rates.apiRequests)} | ${round(report.concurrency.mcp)} | ` +
      `${round(report.concurrency.workerInvocations)} (${round(report.concurrency.workerRecords)} tasks) | ` +
      `${round(report.rates.tableWcu)} / ${round(report.rates.rcu)} | ` +
      `${round(report.rates.indexWcuPerShard)} | ${round(report.rates.sqsRequests)} | ${first} | ${flags.length ? flags.map((f) => `\`${f}\``).join(' ') : 'defaults'}${quota} | ${usd(report.monthlyUsd.total)} |`
    );
  });
  return [
    `Reference workload: tasks of ${REFERENCE_WORKLOAD.taskSeconds} s polled ${REFERENCE_WORKLOAD.pollsPerTask} times each, no input ` +
      `rounds, no steps, no waiting calls.`,
    '',
    '| tasks/s | API req/s | MCP concurrency | worker invocations | table WCU / RCU per s | index WCU/s per shard | SQS req/s | first ' +
      'limit on defaults | settings | monthly cost |',
    '|--:|--:|--:|--:|--:|--:|--:|---|---|--:|',
    ...rows,
  ].join('\n');
}

/** Where the capacity table lives, between `<!-- capacity-table -->` and `<!-- /capacity-table -->`. */
export const CAPACITY_DOC = fileURLToPath(new URL('../../docs/capacity.md', import.meta.url));

/** `doc` with its capacity table rendered afresh from the model. */
export function withDocsTable(doc: string): string {
  const marked = /(<!-- capacity-table -->\n)[\s\S]*?(<!-- \/capacity-table -->)/;
  if (!marked.test(doc)) throw new Error('docs/capacity.md has no <!-- capacity-table --> section');
  return doc.replace(marked, (_whole, open: string, close: string) => `${open}${docsTable()}\n${close}`);
}

function main(argv: string[] = process.argv): void {
  const defaults = defaultDeployment();
  const program = new Command('capacity')
    .description('What the deployed stack needs for a workload: rates, concurrency, the first limit, settings and monthly cost')
    .option('--tasks-per-second <n>', 'tasks created a second', number(0))
    .option('--duration <seconds>', "the tool's running time per task", number(0), REFERENCE_WORKLOAD.taskSeconds)
    .option('--polls <n>', 'tasks/get calls per task', number(0), REFERENCE_WORKLOAD.pollsPerTask)
    .option('--input-rounds <n>', 'questions answered per task', number(0), 0)
    .option('--person-questions <n>', 'of those, questions only a person may answer (each one event)', number(0), 0)
    .option('--steps <n>', 'step checkpoints per task', number(0), 0)
    .option('--waiting-share <share>', 'share of calls (0–1) that wait inside the request for the result', number(0, 1), 0)
    .option('--owners <n>', 'principals creating the tasks, evenly (matters with --max-unfinished)', number(1), 1)
    .option('--worker-max-concurrency <n>', 'the deployment’s workerMaxConcurrency', number(2, 1000), defaults.workerMaxConcurrency)
    .option('--throttle-rate <n>', 'the deployment’s throttleRateLimit (default: sized from the worker concurrency)', number(1))
    .option('--active-index-shards <n>', 'the deployment’s activeIndexShards', number(1, 64), defaults.activeIndexShards)
    .option('--account-concurrency <n>', "the account's Lambda concurrency quota", number(1), defaults.accountConcurrency)
    .option(
      '--issuer <on|off>',
      'the endpoint has an issuer (`authIssuer`, `cognito`, `jwtIssuer`): a cap of 100 by default',
      onOrOff,
      'off',
    )
    .option('--max-unfinished <n>', 'the deployment’s maxUnfinishedTasks (0: no cap; default: 100 with --issuer on, else none)', number(0))
    .option('--events <on|off>', 'the deployment’s lifecycle events (`-c events`)', onOrOff, 'on')
    .option('--listed <on|off>', 'the console lists tasks (an issuer, or `-c console=open`): one index write per task', onOrOff, 'off')
    .option('--approvals <on|off>', 'approvers are named (`-c approvers`): two writes per question for a person', onOrOff, 'off')
    .option('--json', 'print the report as JSON')
    .option('--docs-table', 'print the capacity table of docs/capacity.md and exit')
    .option('--write-docs', 'render the capacity table into docs/capacity.md and exit')
    .action((options) => {
      if (options.writeDocs) {
        const before = readFileSync(CAPACITY_DOC, 'utf8');
        const after = withDocsTable(before);
        if (after !== before) writeFileSync(CAPACITY_DOC, after);
        console.log(after === before ? 'docs/capacity.md is current' : 'docs/capacity.md rewritten');
        return;
      }
      if (options.docsTable) {
        console.log(docsTable());
        return;
      }
      if (options.tasksPerSecond === undefined) program.error('error: --tasks-per-second <n> is required');
      const workload: Workload = {
        tasksPerSecond: options.tasksPerSecond,
        taskSeconds: options.duration,
        pollsPerTask: options.polls,
        inputRounds: options.inputRounds,
        personQuestions: Math.min(options.personQuestions, options.inputRounds),
        steps: options.steps,
        waitingShare: options.waitingShare,
        owners: options.owners,
      };
      const deployment: Deployment = {
        ...defaults,
        workerMaxConcurrency: options.workerMaxConcurrency,
        activeIndexShards: options.activeIndexShards,
        accountConcurrency: options.accountConcurrency,
        events: options.events !== 'off',
        listed: options.listed === 'on',
        approvals: options.approvals === 'on',
        issuer: options.issuer === 'on',
        ...(options.maxUnfinished === undefined ? {} : { maxUnfinishedTasks: options.maxUnfinished }),
        ...sizedThrottle(options.workerMaxConcurrency, options.throttleRate),
      };
      const report = capacity(workload, deployment);
      const { maxUnfinishedTasks, issuer, listed, approvals, events } = deployment;
      const suggested = settingsFor(workload, {
        ...(maxUnfinishedTasks === undefined ? {} : { maxUnfinishedTasks }),
        ...(issuer === undefined ? {} : { issuer }),
        listed,
        ...(approvals === undefined ? {} : { approvals }),
        events,
      });
      if (options.json) console.log(JSON.stringify({ ...report, suggested, contextFlags: contextFlags(suggested) }, null, 2));
      else console.log(formatReport(report, suggested));
    });
  program.parse(argv);
}

/** The throttle given, or the one the stack sizes from the worker concurrency (burst: twice the rate). */
function sizedThrottle(
  workerMaxConcurrency: number,
  rate: number | undefined,
): Pick<Deployment, 'throttleRateLimit' | 'throttleBurstLimit'> {
  if (rate !== undefined) return { throttleRateLimit: rate, throttleBurstLimit: 2 * rate };
  const sized = throttleFor(workerMaxConcurrency);
  return { throttleRateLimit: sized.rateLimit, throttleBurstLimit: sized.burstLimit };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
