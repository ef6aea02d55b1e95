import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { jsonLog, type LogEvent, withLogContext } from '../../shared/log.ts';
import { logTaskEnded, METRICS_NAMESPACE, withMetrics } from '../../shared/metrics.ts';

describe('embedded metric format lines', () => {
  it('declare each metric once, grouped by dimension set, with its value and dimensions as top-level members', () => {
    const line = withMetrics(
      { event: 'task-ended', status: 'failed' },
      { TasksEnded: 1, TaskFailed: 1, TaskDuration: 1234 },
      1_700_000_000_000,
    );
    assert.deepEqual(line, {
      event: 'task-ended',
      status: 'failed',
      TasksEnded: 1,
      TaskFailed: 1,
      TaskDuration: 1234,
      _aws: {
        Timestamp: 1_700_000_000_000,
        CloudWatchMetrics: [
          { Namespace: METRICS_NAMESPACE, Dimensions: [['status']], Metrics: [{ Name: 'TasksEnded', Unit: 'Count' }] },
          {
            Namespace: METRICS_NAMESPACE,
            Dimensions: [[]],
            Metrics: [
              { Name: 'TaskFailed', Unit: 'None' },
              { Name: 'TaskDuration', Unit: 'Milliseconds' },
            ],
          },
        ],
      },
    });
  });

  it('leave an event without metrics as it is', () => {
    assert.deepEqual(withMetrics({ event: 'skip' }, {}), { event: 'skip' });
  });

  it('go through the one sink as one JSON line with the ids of the current scope', () => {
    const written: string[] = [];
    const log = jsonLog((line) => written.push(line));
    withLogContext({ requestId: 'r-1', taskId: 't-1' }, () =>
      logTaskEnded(log, { taskId: 't-1', tool: 'greet', createdAt: 1000 }, 'completed', 1500),
    );
    assert.equal(written.length, 1);
    assert.match(written[0]!, /^\{.*\}\n$/);
    const parsed = JSON.parse(written[0]!) as LogEvent;
    assert.equal(parsed['requestId'], 'r-1');
    assert.equal(parsed['taskId'], 't-1');
    assert.equal(parsed.event, 'task-ended');
    assert.equal(parsed['status'], 'completed');
    assert.equal(parsed['TaskFailed'], 0);
    assert.equal(parsed['TaskDuration'], 500);
  });

  it('omit the duration when the creation time is not known', () => {
    const lines: LogEvent[] = [];
    logTaskEnded((line) => lines.push(line), { taskId: 't-2' }, 'cancelled', 2000);
    assert.equal('TaskDuration' in lines[0]!, false);
    assert.equal(lines[0]!['TasksEnded'], 1);
  });
});
