/**
 * The DynamoDB side of questions for a person, on dynalite: what the
 * approvers' list writes (one item per question, put with the wait's TTL
 * and taken out of the list index once decided), the `decisions` attribute
 * of a decided row, and rows written before decisions existed: they read
 * with none, take a decision, and hand their answer to the tool without one.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type AttributeValue, DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { accept, testTool } from '#tool-kit';
import { ensureTaskTable, type LocalDynamoDb, startDynalite } from '../../bin/local/dynamodb.ts';
import { approvalGate } from '../../functions/tools/approval-gate.ts';
import { DynamoDbTaskStore, LIST_INDEX, TABLE_KEYS, TASK_ROW_SK, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb/index.ts';
import { ANSWERED_BY_META, type InputRequest } from '../../shared/tasks/model.ts';
import { CONTRACT_POLICY } from '../contract/kit.ts';
import { newTask } from '../support/factories.ts';

type Item = Record<string, AttributeValue>;

const T0 = 1_700_000_000_000;
const PERSONAL: InputRequest = {
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message: 'Approve?',
    requestedSchema: { type: 'object', properties: {} },
    _meta: { [ANSWERED_BY_META]: 'person' },
  },
};
const YES = { action: 'accept', content: { approve: true } };

describe('DynamoDbTaskStore: questions for a person', () => {
  let local: LocalDynamoDb;
  let client: DynamoDBClient;
  let tableName: string;
  let store: DynamoDbTaskStore;

  before(async () => {
    local = await startDynalite();
    client = new DynamoDBClient({ endpoint: local.endpoint, region: 'us-east-1', credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    tableName = `tasks-${randomUUID()}`;
    await ensureTaskTable(client, tableName);
    store = new DynamoDbTaskStore({ client, tableName, policy: { ...CONTRACT_POLICY, maxInputWaitMs: 86_400_000 } });
  });
  after(async () => {
    client.destroy();
    await local.close();
  });

  const rawItem = async (pk: string, sk: string): Promise<Item | undefined> =>
    (
      await client.send(
        new GetItemCommand({
          TableName: tableName,
          Key: { [TABLE_KEYS.partition]: { S: pk }, [TABLE_KEYS.sort]: { S: sk } },
          ConsistentRead: true,
        }),
      )
    ).Item;

  async function waiting(): Promise<string> {
    const { task } = await store.create(newTask({ owner: 'alice', now: T0, ttlMs: 60_000 }));
    const claimed = await store.claim(task.taskId, 'w1', T0 + 1);
    assert.ok(claimed);
    await store.finish(claimed, 'w1', { status: 'input_required', inputRequests: { approval: PERSONAL } }, T0 + 2);
    return task.taskId;
  }

  it('lists a question for a person as one item with the wait’s TTL, and deletes it once decided; the row keeps who decided', async () => {
    const taskId = await waiting();
    const entry = await rawItem(taskId, 'person#approval');
    assert.ok(entry, 'the approvers’ list entry');
    assert.equal(entry[LIST_INDEX.partition]?.S, 'person-questions');
    assert.match(entry[LIST_INDEX.sort]?.S ?? '', new RegExp(`^0*${T0 + 2}#${taskId}#approval$`));
    const row = await rawItem(taskId, TASK_ROW_SK);
    assert.equal(entry[TTL_ATTRIBUTE]?.N, row?.[TTL_ATTRIBUTE]?.N, 'the entry expires with the waiting row');

    await store.decide(taskId, { principal: 'ada', name: 'Ada', approver: true }, { approval: YES }, T0 + 10);
    const unlisted = await rawItem(taskId, 'person#approval');
    assert.equal(unlisted?.[LIST_INDEX.partition], undefined, 'out of the list index once decided');
    assert.equal(unlisted?.[TTL_ATTRIBUTE]?.N, entry[TTL_ATTRIBUTE]?.N, 'the item itself goes with its TTL');

    // A question asked before approvers were named has no entry: its decision takes nothing out, and fails nothing.
    const { approvals: _on, ...unlistedPolicy } = { ...CONTRACT_POLICY, maxInputWaitMs: 86_400_000 };
    const before = new DynamoDbTaskStore({ client, tableName, policy: unlistedPolicy });
    const { task } = await before.create(newTask({ owner: 'alice', now: T0, ttlMs: 60_000 }));
    const claimed = await before.claim(task.taskId, 'w1', T0 + 1);
    assert.ok(claimed);
    await before.finish(claimed, 'w1', { status: 'input_required', inputRequests: { approval: PERSONAL } }, T0 + 2);
    assert.equal(await rawItem(task.taskId, 'person#approval'), undefined);
    assert.equal((await store.decide(task.taskId, { principal: 'ada', approver: true }, { approval: YES }, T0 + 12)).resumed, true);
    assert.equal(await rawItem(task.taskId, 'person#approval'), undefined, 'no item made by taking it out');
    const decided = await rawItem(taskId, TASK_ROW_SK);
    assert.deepEqual(JSON.parse(decided?.['decisions']?.S ?? 'null'), {
      approval: { by: 'ada', name: 'Ada', as: 'approver', via: 'page', at: T0 + 10 },
    });
  });

  it('reads a row written before decisions existed, decides on it, and the tool gets the answer without a decidedBy', async () => {
    const taskId = await waiting();
    const row = (await rawItem(taskId, TASK_ROW_SK))!;
    assert.equal(row['decisions'], undefined);
    // An old row answered in-band before decisions were recorded: its answer and no decision.
    const { inputRequests: _asked, ...rest } = row;
    await client.send(
      new PutItemCommand({
        TableName: tableName,
        Item: { ...rest, status: { S: 'working' }, inputResponses: { S: JSON.stringify({ approval: YES }) } },
      }),
    );
    const old = await store.get(taskId, 'alice', T0 + 20);
    assert.equal(old?.status, 'working');
    assert.equal(old?.decisions, undefined);
    const result = await testTool(approvalGate, { action: 'deploy' }, { answers: { approval: accept({ approve: true }) } }).result();
    assert.equal(result.structuredContent?.['approved'], true);
    assert.equal('decidedBy' in (result.structuredContent ?? {}), false, 'no decision recorded: none handed over');

    // A waiting row of the old form (no decisions attribute) takes a decision as any other.
    const waitingOld = await waiting();
    assert.deepEqual(await store.decide(waitingOld, { principal: 'alice', approver: false }, { approval: YES }, T0 + 30), {
      accepted: ['approval'],
      resumed: true,
      decided: ['approval'],
    });
    assert.equal((await store.get(waitingOld, 'alice', T0 + 31))?.decisions?.['approval']?.as, 'owner');
  });
});
