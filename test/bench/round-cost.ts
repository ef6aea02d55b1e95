/**
 * What the release's features added to a simple task, added up: the figures
 * measured now next to those this same bench measured on the release before
 * (commit `7735f1c`, run on the local stack as `npx tsx test/bench/aws-calls.ts`;
 * it counted no events, and published none), for a task-declaring client and
 * for a fallback client. The features: the repeat-call join (a fallback call
 * reads its slot first), the console's list index (one write at creation where
 * a console lists tasks, as `npm start`'s does), lifecycle events (one at each
 * end). Callbacks and approvals cost nothing on a task that uses neither; their
 * own costs are printed with their scenarios.
 *
 * The target (the design guide's): a feature that adds a write per task stays
 * within 1.25× of the design minimum, applied to the whole: what the task
 * itself costs on AWS, before and now, priced as the bench's cost table
 * prices it (polls left out: the client chooses how often it polls).
 */
import { ASSUMED, PRICE } from '../../infra/prices.ts';
import type { Figures } from './aws-counting.ts';

/** What a client's simple task cost: its figures, the bytes its functions logged, the MCP requests it took. */
export interface TaskCost {
  figures: Figures;
  logBytes: number;
  apiRequests: number;
}

import { FIGURE_COLUMNS } from './report.ts';

/** What the bench measured at `7735f1c` (simple task; fallback call ending within its budget). */
const BEFORE: Record<'task' | 'fallback', TaskCost> = {
  task: { figures: { rcu: 0, wcu: 5, ddbRequests: 3, sqsRequests: 3, invocations: 1, events: 0 }, logBytes: 1445, apiRequests: 1 },
  fallback: { figures: { rcu: 1, wcu: 5, ddbRequests: 4, sqsRequests: 3, invocations: 1, events: 0 }, logBytes: 1627, apiRequests: 1 },
};

/** The most the release's features may add to a simple task's cost. */
const TARGET = 1.25;

/**
 * A task's own AWS cost in dollars: DynamoDB units, SQS requests, the worker's
 * invocations and the MCP requests that created it (Lambda and HTTP API), the
 * logs (the functions' measured bytes, the platform's lines per invocation, the
 * access log per request), lifecycle events.
 */
function costOf({ figures, logBytes, apiRequests }: TaskCost): number {
  const worker = figures.invocations * (PRICE.lambdaRequest + (ASSUMED.memoryGb * ASSUMED.workerMs * PRICE.lambdaGbSecond) / 1000);
  const requests =
    apiRequests * (PRICE.lambdaRequest + PRICE.httpApiRequest + (ASSUMED.memoryGb * ASSUMED.mcpMs * PRICE.lambdaGbSecond) / 1000);
  const logged = logBytes + (apiRequests + figures.invocations) * ASSUMED.platformLogBytes + apiRequests * ASSUMED.accessLogBytes;
  return (
    figures.wcu * PRICE.wru +
    figures.rcu * PRICE.rru +
    figures.sqsRequests * PRICE.sqsRequest +
    worker +
    requests +
    (logged / 1024 ** 3) * PRICE.logsGb +
    figures.events * PRICE.eventBridgeEvent
  );
}

/** The table, as lines; `over` lists the clients whose cost grew past the target. */
export function roundCost(now: Record<'task' | 'fallback', TaskCost>): { lines: string[]; over: string[] } {
  const clients = [
    ['task-declaring client (simple task)', 'task'],
    ['fallback client (a call ending within its budget)', 'fallback'],
  ] as const;
  const lines = [
    '',
    "The release's features added up, a simple task before them (7735f1c) and now, and its AWS cost per 1,000 tasks (logs included, polls excluded):",
    '',
    `| client | ${FIGURE_COLUMNS.map(([title]) => `${title} before | now`).join(' | ')} | cost before | now | ratio |`,
    `|---|${FIGURE_COLUMNS.map(() => '--:|--:').join('|')}|--:|--:|--:|`,
  ];
  const over: string[] = [];
  for (const [label, key] of clients) {
    const before = BEFORE[key];
    const after = now[key];
    const ratio = costOf(after) / costOf(before);
    if (ratio > TARGET) over.push(label);
    const cells = FIGURE_COLUMNS.map(([, figure]) => `${before.figures[figure]} | ${after.figures[figure]}`).join(' | ');
    lines.push(
      `| ${label} | ${cells} | $${(costOf(before) * 1000).toFixed(4)} | $${(costOf(after) * 1000).toFixed(4)} | ${ratio.toFixed(2)}× |`,
    );
  }
  lines.push('');
  lines.push(
    over.length === 0
      ? `Within the ${TARGET}× target for both clients.`
      : `OVER the ${TARGET}× target: ${over.join(', ')}. A feature must pay for itself elsewhere or be opt-in.`,
  );
  return { lines, over };
}
