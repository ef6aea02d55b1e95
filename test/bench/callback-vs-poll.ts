/**
 * The same outside job, waited on two ways: `external_job` polling its
 * status (`mode: "poll"`, a check a second) and called back by the local
 * stack's simulated job system (`mode: "callback"`). Measured like the
 * scenarios (`aws-scenarios.ts`), each from a quiet queue to a quiet queue,
 * and printed next to the design's minimum for what it did: the polling
 * minimum follows the checks the run recorded (timing decides how many).
 */
import { detail, ENTER, type Figures, figuresOf, LEAVE, MOVE, meter, type Row, resetMeter } from './aws-counting.ts';
import type { CountingStack } from './aws-scenarios.ts';
import { LISTED, ROW_RCU, ROW_WCU } from './minima.ts';

/** The job: two seconds of outside work. */
const JOB = { input: 'bench', durationSeconds: 2 };

/**
 * Polling with `checks` status checks: each run is a claim, a journal query
 * and a status step; every run but the last also writes the tool's progress
 * message (`Job … is running (check n)`; the first run's is the submit's,
 * `external_job` reporting both within the one-a-second throttle), records
 * its durable sleep and hands over (release + a delayed message); the first
 * also records the submit; the last finishes. So every further check adds
 * 5 writes (claim, status step, progress, sleep, hand-over), a query, a move
 * of the index entry, 3 SQS requests and a run. Index: enter, a move per
 * hand-over, leave.
 */
export function pollMin(checks: number): Figures {
  const writes = 5 * checks;
  return {
    ddbRequests: writes + checks,
    rcu: checks * ROW_RCU,
    wcu: writes * ROW_WCU + ENTER + (checks - 1) * MOVE + LEAVE + LISTED,
    sqsRequests: 3 * checks,
    invocations: checks,
    events: 1,
  };
}

/**
 * A callback: create, claim, the callback's step (submit), the suspension
 * (one write: the wait's deadline moves `sweepAt`); the completion (a read
 * and one conditional write, which moves `sweepAt` to now + W, and the
 * resume message); the second claim and the finish. A journal query per run.
 */
export const CALLBACK_MIN: Figures = {
  ddbRequests: 7 + 3,
  rcu: 3 * ROW_RCU,
  wcu: 7 * ROW_WCU + ENTER + MOVE + MOVE + LEAVE + LISTED,
  sqsRequests: 6,
  invocations: 2,
  events: 1,
};

export async function callbackVersusPoll(bench: CountingStack): Promise<Row[]> {
  const { statusOf, quiescent, createTask } = bench;
  const rows: Row[] = [];
  for (const mode of ['poll', 'callback'] as const) {
    await quiescent();
    resetMeter();
    const taskId = await createTask('external_job', { ...JOB, mode, pollEverySeconds: 1 });
    const done = await statusOf(taskId, ['completed', 'failed']);
    if (done.status !== 'completed' || done.result['isError'] === true)
      throw new Error(`bench: external_job ${mode}: ${JSON.stringify(done)}`);
    await quiescent();
    // The completion's POST is one request to the API (the simulated job system's).
    if (mode === 'callback') meter.apiRequests += 1;
    const checks = (done.result['structuredContent'] as { checks?: number }).checks ?? 0;
    rows.push({
      scenario: mode === 'poll' ? `external_job, poll (${checks} checks)` : 'external_job, callback',
      measured: figuresOf(meter),
      minimum: mode === 'poll' ? pollMin(checks) : CALLBACK_MIN,
      meter: { ...meter },
      taskId,
    });
  }
  return rows;
}

/** One line per row: the figures of the two modes side by side. */
export function callbackLines(rows: Row[]): string[] {
  return [
    '',
    `The same ${JOB.durationSeconds}-second outside job, polled every second or called back (measured, per task):`,
    ...rows.map(
      (row) =>
        `- ${row.scenario}: ${row.measured.ddbRequests} DynamoDB requests (${row.measured.wcu} WCU, ${row.measured.rcu} RCU), ` +
        `${row.measured.sqsRequests} SQS requests, ${row.measured.invocations} worker invocations; ${detail(row.meter)}`,
    ),
  ];
}
