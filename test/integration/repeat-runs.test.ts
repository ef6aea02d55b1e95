/**
 * Repeated identical calls on the DynamoDB store (dynalite, through the real
 * SDK client): every run of a call joins its repeats, and what each call and
 * each end sends to DynamoDB stays the same whatever the number of runs before.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { LocalDynamoDb } from '../../bin/local/dynamodb.ts';
import { REPEAT_WINDOW_MS, repeatWindows } from '../../shared/actions/repeat-calls.ts';
import { TaskActions, type TaskToStart } from '../../shared/actions/task-actions.ts';
import { purposeKey } from '../../shared/keys.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { DynamoDbTaskStore } from '../../shared/tasks/dynamodb/index.ts';
import { localTable, probeTable, type TableProbe } from '../support/dynalite-table.ts';
import { storePolicy } from '../support/factories.ts';

const KEY = purposeKey(new Uint8Array(32).fill(5), 'repeat-call-id');
const T0 = 60 * REPEAT_WINDOW_MS;

describe('repeated identical calls on DynamoDB', () => {
  let local: LocalDynamoDb;
  let client: DynamoDBClient;
  let store: DynamoDbTaskStore;
  let probe: TableProbe;
  before(async () => {
    const table = await localTable();
    ({ local, client } = table);
    store = new DynamoDbTaskStore({ client, tableName: table.tableName, policy: storePolicy() });
    probe = probeTable(client, table.tableName);
  });
  after(async () => {
    client.destroy();
    await local.close();
  });

  it('ten runs one after another in one window, each with a repeat while it runs: every repeat joins, every call costs the same', async () => {
    let now = T0;
    const actions = new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => now });
    const call = { principal: 'alice', tool: 'slow_compute', args: { seconds: 45 } };
    const start: TaskToStart = {
      owner: 'alice',
      tool: call.tool,
      arguments: call.args,
      clientCapabilities: {},
      ttlMs: 3_600_000,
      pollIntervalMs: 1000,
    };
    const join = () => actions.createOrJoin(start, repeatWindows(KEY, call, now));
    for (let run = 0; run < 10; run++) {
      let first: Awaited<ReturnType<typeof join>> | undefined;
      const firstCommands = await probe.commandsOf(async () => (first = await join()));
      assert.equal(first?.joined, false, `run ${run} starts`);
      // This window's head (absent for run 0, so the previous window's is read too), then the create: the put.
      assert.deepEqual(firstCommands, run === 0 ? ['GetItem', 'GetItem', 'PutItem'] : ['GetItem', 'PutItem'], `run ${run}'s first call`);
      let repeat: Awaited<ReturnType<typeof join>> | undefined;
      const repeatCommands = await probe.commandsOf(async () => (repeat = await join()));
      assert.deepEqual([repeat?.joined, repeat?.task.taskId], [true, first?.task.taskId], `run ${run}'s repeat joins it`);
      // Run 0 is the head itself; a later run is found by the create's refused put and the read of what refused it.
      assert.deepEqual(repeatCommands, run === 0 ? ['GetItem'] : ['GetItem', 'PutItem', 'GetItem'], `run ${run}'s repeat`);
      now += 1_000;
      const taskId = first!.task.taskId;
      const endCommands = await probe.commandsOf(async () => {
        const claimed = await store.claim(taskId, 'w', now);
        assert.ok(claimed);
        await store.finish(claimed, 'w', { status: 'completed', result: { content: [] } }, now + 1);
      });
      // A later run's end is counted on the head: one more write, after the finish.
      assert.deepEqual(
        endCommands,
        run === 0 ? ['UpdateItem', 'UpdateItem'] : ['UpdateItem', 'UpdateItem', 'UpdateItem'],
        `run ${run}'s end`,
      );
    }
    const { current } = repeatWindows(KEY, call, T0);
    const head = await probe.rawRow(current.head);
    assert.equal(head['runsEnded']?.N, '10');
    assert.equal(head['version']?.N, (await probe.rawRow(current.run(1)))['version']?.N, "the count leaves the head's version alone");
  });
});
