/**
 * Who starts a task, as a person reads it: the name (or email) a token
 * carried reaches the row the call creates, for its pages; a call without
 * one keeps none (the pages then name the subject).
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { approvalGate } from '../../../functions/tools/approval-gate.ts';
import { DEFAULT_SETTINGS } from '../../../shared/config.ts';
import { createEndpoint } from '../../../shared/protocol/endpoint.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { storePolicy } from '../../support/factories.ts';
import { resultOf, rpc, TASKS_CAPABILITIES } from '../../support/wire.ts';

describe('who starts a task', () => {
  it("is kept on the row from the caller's token, and only when it named them", async () => {
    const store = new InMemoryTaskStore(storePolicy());
    const key = randomBytes(32);
    const endpoint = createEndpoint({
      store,
      queue: new InMemoryTaskQueue(),
      tools: new Map([[approvalGate.name, approvalGate]]),
      config: DEFAULT_SETTINGS,
      log: () => {},
      stackSecret: async () => key,
      originPolicy: { kind: 'loopback' },
    });
    const start = async (requester?: string) => {
      const reply = await rpc(
        (request: Request) => endpoint.fetch(request, 'alice', requester === undefined ? {} : { requester }),
        'tools/call',
        { name: 'approval_gate', arguments: { action: 'deploy' } },
        { capabilities: TASKS_CAPABILITIES },
      );
      const taskId = String(resultOf(reply)['taskId'] ?? (resultOf(reply)['task'] as { taskId?: string } | undefined)?.taskId);
      return store.get(taskId, 'alice', Date.now());
    };
    const named = await start('Alice Liddell');
    assert.equal(named?.requester, 'Alice Liddell');
    assert.equal(named?.toolTitle, 'Approval gate', "and the tool's title, for the console's heading");
    const unnamed = await start();
    assert.ok(unnamed, 'the task exists');
    assert.equal('requester' in unnamed, false);
  });
});
