/** Cost per 1,000 tasks at list prices, from the measured figures and what the bench cannot measure. */

import { ASSUMED, PRICE } from '../../infra/prices.ts';
import type { PollCost, Row } from './aws-counting.ts';
import { ROW_RCU } from './minima.ts';

/** Polls per task assumed for the client (`BENCH_POLLS_PER_TASK`): one a second for a task of ~10 s. */
const POLLS_PER_TASK = Number(process.env['BENCH_POLLS_PER_TASK'] ?? 10);
/** The cost table of the measured scenarios, as lines. */
export function costReport(rows: Row[], gets: PollCost[]): string[] {
  const usd = (value: number) => `$${value.toFixed(4)}`;
  const out = [
    '',
    `Cost per 1,000 tasks at list prices (us-east-1, no free tier), including ${POLLS_PER_TASK} tasks/get polls per task ` +
      `(BENCH_POLLS_PER_TASK):`,
    '',
  ];
  out.push('| scenario | DynamoDB | SQS | Lambda | HTTP API | Logs | EventBridge | total | of which polls | X-Ray if tracing on |');
  out.push('|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|');
  for (const row of rows) {
    const get = gets.find((g) => g.scenario === row.scenario);
    const m = row.meter;
    const f = row.measured;
    const polls = POLLS_PER_TASK;
    const pollRcu = (get?.rcu ?? ROW_RCU) * polls;
    const apiRequests = m.apiRequests + polls;
    const invocations = apiRequests + f.invocations;
    const gbSeconds = ASSUMED.memoryGb * ((apiRequests * ASSUMED.mcpMs + f.invocations * ASSUMED.workerMs) / 1000);
    const logBytes =
      m.logBytes + (get?.logBytes ?? 0) * polls + invocations * ASSUMED.platformLogBytes + apiRequests * ASSUMED.accessLogBytes;
    const parts = {
      dynamodb: f.wcu * PRICE.wru + (f.rcu + pollRcu) * PRICE.rru,
      sqs: f.sqsRequests * PRICE.sqsRequest,
      lambda: invocations * PRICE.lambdaRequest + gbSeconds * PRICE.lambdaGbSecond,
      api: apiRequests * PRICE.httpApiRequest,
      logs: (logBytes / 1024 ** 3) * PRICE.logsGb,
      // Lifecycle events: one billed custom event each (under 64 KB).
      events: f.events * PRICE.eventBridgeEvent,
    };
    const pollShare =
      pollRcu * PRICE.rru +
      polls * (PRICE.lambdaRequest + PRICE.httpApiRequest + (ASSUMED.memoryGb * ASSUMED.mcpMs * PRICE.lambdaGbSecond) / 1000) +
      (((get?.logBytes ?? 0) + ASSUMED.platformLogBytes + ASSUMED.accessLogBytes) * polls * PRICE.logsGb) / 1024 ** 3;
    const total = Object.values(parts).reduce((a, b) => a + b, 0);
    // Traced, a task is one trace (its runs and waits are spans of the call's trace; tasks/get is not traced).
    const xray = PRICE.xrayTrace;
    const k = 1000;
    out.push(
      `| ${row.scenario} | ${usd(parts.dynamodb * k)} | ${usd(parts.sqs * k)} | ${usd(parts.lambda * k)} | ${usd(parts.api * k)} | ` +
        `${usd(parts.logs * k)} | ${usd(parts.events * k)} | ${usd(total * k)} | ${usd(pollShare * k)} | +${usd(xray * k)} |`,
    );
  }
  out.push('');
  out.push(
    `Assumed (not measurable here): ${ASSUMED.mcpMs} ms per MCP request and ${ASSUMED.workerMs} ms per worker run besides the tool's`,
  );
  out.push(
    `own time, at ${ASSUMED.memoryGb * 1024} MB; ${ASSUMED.platformLogBytes} bytes of Lambda platform lines per invocation, ` +
      `${ASSUMED.accessLogBytes} bytes of access log`,
  );
  out.push('per request. Measured: DynamoDB units, SQS requests, invocations, requests, EventBridge events and the bytes the');
  out.push('functions log.');
  return out;
}
