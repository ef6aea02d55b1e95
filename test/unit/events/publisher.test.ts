/**
 * Sending lifecycle events: `LifecycleEvents` (bounded retries, then a log
 * line and a metric, never a throw) and the EventBridge adapter's mapping to
 * `PutEvents` and of its partial failures. The adapter's client is a stub
 * here, the one place a mock stands in for AWS; the adapter against a real
 * SDK client and HTTP endpoint is in test/integration/lifecycle-events.test.ts.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EventBridgeClient, PutEventsCommand, PutEventsCommandOutput } from '@aws-sdk/client-eventbridge';
import { EventBridgePublisher, MAX_ENTRIES_PER_PUT } from '../../../shared/events/eventbridge.ts';
import { type EventPublisher, LifecycleEvents, MemoryEventPublisher, PUBLISH_ATTEMPTS } from '../../../shared/events/publisher.ts';
import { DETAIL_TYPES, EVENT_SOURCE, type TaskEvent } from '../../../shared/events/task-events.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import type { LogEvent } from '../../../shared/log.ts';
import { newTaskRecord } from '../../../shared/tasks/decisions.ts';
import type { TaskRecord } from '../../../shared/tasks/model.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const CONTEXT = { links: new DeploymentLinks('https://tasks.example.com') };

function completed(): TaskRecord {
  const task = newTaskRecord(newTask({ now: 1_000 }), storePolicy());
  return { ...task, status: 'completed', result: { content: [] }, lastUpdatedAt: 3_000 };
}

/** A publisher whose first `failures` calls fail as given, then accepts. */
class Flaky implements EventPublisher {
  calls = 0;
  readonly accepted: TaskEvent[] = [];
  constructor(
    private failures: number,
    private readonly how: 'throw' | 'refuse',
  ) {}
  async put(events: readonly TaskEvent[]): Promise<readonly TaskEvent[]> {
    this.calls += 1;
    if (this.failures > 0) {
      this.failures -= 1;
      if (this.how === 'throw') throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
      return events;
    }
    this.accepted.push(...events);
    return [];
  }
}

function announcer(publisher: EventPublisher, lines: LogEvent[]) {
  return new LifecycleEvents({ publisher, log: (line) => void lines.push(line), context: CONTEXT, retryDelayMs: 1 });
}

describe('LifecycleEvents', () => {
  it('publishes what the row implies, once, and logs nothing when it went out', async () => {
    const memory = new MemoryEventPublisher();
    const lines: LogEvent[] = [];
    await announcer(memory, lines).announce(completed());
    assert.deepEqual(
      memory.events.map((event) => event.detailType),
      [DETAIL_TYPES.completed],
    );
    assert.deepEqual(lines, []);
  });

  it('publishes nothing (and calls nothing) for a row that implies no event', async () => {
    const flaky = new Flaky(0, 'throw');
    const working = newTaskRecord(newTask(), storePolicy());
    await announcer(flaky, []).announce(working);
    assert.equal(flaky.calls, 0);
  });

  for (const how of ['throw', 'refuse'] as const) {
    it(`retries a publish that ${how === 'throw' ? 'failed' : 'had its entries refused'}, up to ${PUBLISH_ATTEMPTS} attempts`, async () => {
      const flaky = new Flaky(PUBLISH_ATTEMPTS - 1, how);
      const lines: LogEvent[] = [];
      await announcer(flaky, lines).announce(completed());
      assert.equal(flaky.calls, PUBLISH_ATTEMPTS);
      assert.equal(flaky.accepted.length, 1);
      assert.deepEqual(lines, []);
    });

    it(`after the last attempt (${how}), logs the loss by name and counts it in EventsFailed, and does not throw`, async () => {
      const flaky = new Flaky(PUBLISH_ATTEMPTS, how);
      const lines: LogEvent[] = [];
      const task = completed();
      await announcer(flaky, lines).announce(task);
      assert.equal(flaky.calls, PUBLISH_ATTEMPTS, 'bounded: no attempt beyond the last');
      assert.equal(lines.length, 1);
      const [line] = lines;
      assert.equal(line?.event, 'events-failed');
      assert.equal(line?.['taskId'], task.taskId);
      assert.deepEqual(line?.['detailTypes'], [DETAIL_TYPES.completed]);
      assert.equal(line?.['error'], how === 'throw' ? 'TimeoutError' : 'entries-refused');
      assert.equal(line?.['EventsFailed'], 1);
      assert.deepEqual((line!['_aws'] as { CloudWatchMetrics: unknown[] }).CloudWatchMetrics, [
        { Namespace: 'McpTasks', Dimensions: [[]], Metrics: [{ Name: 'EventsFailed', Unit: 'Count' }] },
      ]);
      assert.ok(!JSON.stringify(line).includes('socket hang up'), "the error's message stays out of the log");
    });
  }
});

/** An EventBridge client stub: records each command's input and answers with `answer`. */
function stubClient(answer: (input: PutEventsCommand['input']) => Partial<PutEventsCommandOutput>) {
  const inputs: PutEventsCommand['input'][] = [];
  const client = {
    send: async (command: PutEventsCommand) => {
      inputs.push(command.input);
      return answer(command.input);
    },
  } as unknown as EventBridgeClient;
  return { client, inputs };
}

function event(taskId: string): TaskEvent {
  return {
    detailType: DETAIL_TYPES.cancelled,
    time: Date.parse('2026-12-01T10:00:00Z'),
    detail: {
      version: 1,
      eventId: `${taskId}:cancelled`,
      taskId,
      tool: 'echo',
      createdAt: '2026-12-01T09:59:00.000Z',
      status: 'cancelled',
      endedAt: '2026-12-01T10:00:00.000Z',
      durationMs: 60_000,
    },
  };
}

describe('EventBridgePublisher', () => {
  it('sends one PutEvents entry per event: the bus, the source, the detail-type, the detail as JSON, the time', async () => {
    const { client, inputs } = stubClient(() => ({ FailedEntryCount: 0, Entries: [{ EventId: 'e1' }] }));
    const refused = await new EventBridgePublisher({ client, busName: 'McpTasksEvents' }).put([event('t1')]);
    assert.deepEqual(refused, []);
    assert.deepEqual(inputs, [
      {
        Entries: [
          {
            EventBusName: 'McpTasksEvents',
            Source: EVENT_SOURCE,
            DetailType: 'Task Cancelled',
            Detail: JSON.stringify(event('t1').detail),
            Time: new Date('2026-12-01T10:00:00Z'),
          },
        ],
      },
    ]);
  });

  it('resolves to the entries EventBridge refused, by their index in the answer', async () => {
    const { client } = stubClient(() => ({
      FailedEntryCount: 1,
      Entries: [{ EventId: 'e1' }, { ErrorCode: 'ThrottlingException', ErrorMessage: 'Rate exceeded' }, { EventId: 'e3' }],
    }));
    const refused = await new EventBridgePublisher({ client, busName: 'bus' }).put([event('a'), event('b'), event('c')]);
    assert.deepEqual(
      refused.map((e) => e.detail.taskId),
      ['b'],
    );
  });

  it('retries them all when a failure comes without per-entry results', async () => {
    const { client } = stubClient(() => ({ FailedEntryCount: 2 }));
    const refused = await new EventBridgePublisher({ client, busName: 'bus' }).put([event('a'), event('b')]);
    assert.equal(refused.length, 2);
  });

  it('sends nothing for no events, and refuses more than one request takes', async () => {
    const { client, inputs } = stubClient(() => ({ FailedEntryCount: 0, Entries: [] }));
    const publisher = new EventBridgePublisher({ client, busName: 'bus' });
    assert.deepEqual(await publisher.put([]), []);
    assert.equal(inputs.length, 0);
    const many = Array.from({ length: MAX_ENTRIES_PER_PUT + 1 }, (_, i) => event(`t${i}`));
    await assert.rejects(publisher.put(many), RangeError);
  });
});
