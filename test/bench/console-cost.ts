/**
 * What the console costs per request, measured on the bench's local stack
 * (its open console, the functions' DynamoDB client metered): a task's page,
 * one live read of it, the list and one live refresh of the list; and from
 * those, what an open tab costs per hour (a list refreshes every 15 s while
 * visible; a task page reads at the task's poll interval, shown here at 5 s).
 * Each console request is one HTTP API request and one console invocation.
 */
import { ASSUMED, PRICE } from '../../infra/prices.ts';
import { LIST_REFRESH_MS } from '../../shared/console/pages/list.tsx';
import { detail, figuresOf, meter, resetMeter } from './aws-counting.ts';
import type { CountingStack } from './aws-scenarios.ts';

/** One console request's figures. */
interface ConsoleCost {
  request: string;
  rcu: number;
  ddbRequests: number;
  usd: number;
  commands: string;
}

const requestUsd = (rcu: number) =>
  PRICE.httpApiRequest + PRICE.lambdaRequest + ASSUMED.memoryGb * (ASSUMED.mcpMs / 1000) * PRICE.lambdaGbSecond + rcu * PRICE.rru;

/** Measures the console's requests against the finished task `taskId`; returns the report's lines. */
export async function consoleCost(bench: CountingStack, taskId: string): Promise<string[]> {
  const base = bench.stack.url.replace(/\/mcp$/, '');
  // The open console gives its visitor a session with the first page (not counted).
  const first = await fetch(`${base}/console`);
  await first.text();
  const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const costs: ConsoleCost[] = [];
  for (const [request, path] of [
    ['task page', `/console/tasks/${taskId}`],
    ['task page, live read', `/console/tasks/${taskId}/live`],
    ['list page', '/console'],
    ['list, live refresh', '/console/live'],
  ] as const) {
    await bench.quiescent();
    resetMeter();
    const response = await fetch(`${base}${path}`, { headers: { cookie } });
    if (!response.ok) throw new Error(`bench: ${path} answered ${response.status}`);
    await response.text();
    const figures = figuresOf(meter);
    costs.push({ request, rcu: figures.rcu, ddbRequests: figures.ddbRequests, usd: requestUsd(figures.rcu), commands: detail(meter) });
  }
  const perHour = (cost: ConsoleCost | undefined, everyMs: number) => (cost ? (3_600_000 / everyMs) * cost.usd : 0);
  const list = costs.find((c) => c.request === 'list, live refresh');
  const live = costs.find((c) => c.request === 'task page, live read');
  return [
    '',
    'The console per request (DynamoDB measured; an HTTP API request and a 512 MB console invocation of 50 ms assumed):',
    '',
    '| request | DynamoDB requests | read units | $ per million | commands |',
    '|---|---|---|---|---|',
    ...costs.map((c) => `| ${c.request} | ${c.ddbRequests} | ${c.rcu} | ${(c.usd * 1e6).toFixed(2)} | ${c.commands} |`),
    '',
    `An open list tab (a refresh every ${LIST_REFRESH_MS / 1000} s while visible): $${perHour(list, LIST_REFRESH_MS).toFixed(5)} per hour; ` +
      `an open task page reading every 5 s: $${perHour(live, 5_000).toFixed(5)} per hour. A hidden tab reads nothing.`,
  ];
}
