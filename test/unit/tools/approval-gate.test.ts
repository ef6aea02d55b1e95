/** `approval_gate` through the tool author's test kit (`#tool-kit`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accept, decline, testTool, textOf } from '#tool-kit';
import { approvalGate } from '../../../functions/tools/approval-gate.ts';

describe('approval_gate', () => {
  it('asks once, then carries out the action with the comment', async () => {
    const run = testTool(approvalGate, { action: 'deploy web' });
    assert.equal((await run.once()).kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests), ['approval']);
    assert.equal((run.inputRequests['approval']!.params as { message: string }).message, 'Approve: deploy web?');
    const result = await run.answer('approval', accept({ approve: true, comment: 'go' })).result();
    assert.equal(textOf(result), 'Approved and done: deploy web (go)');
    assert.deepEqual(result.structuredContent, {
      approved: true,
      action: 'deploy web',
      comment: 'go',
      message: 'Approved and done: deploy web (go)',
    });
    assert.deepEqual(run.progress, ['Approved; carrying out: deploy web']);
  });

  for (const [what, answer] of [
    ['a decline', decline()],
    ['a "no"', accept({ approve: false })],
  ] as const) {
    it(`refuses on ${what} with a tool-level error, not a failure`, async () => {
      const result = await testTool(approvalGate, { action: 'drop table' }, { answers: { approval: answer } }).result();
      assert.equal(result.isError, true);
      assert.equal(textOf(result), 'Not approved: drop table');
      assert.equal(result.structuredContent?.['message'], textOf(result), 'structuredContent says what the text says');
    });
  }
});

describe('approval_gate rejected with a reason', () => {
  it('names who rejected and why, in the text and in structuredContent', async () => {
    const decidedBy = { by: 'jwt|x', name: 'ada@example.com', as: 'approver' as const, via: 'page' as const, at: Date.UTC(2026, 0, 2) };
    const run = testTool(approvalGate, { action: 'drop table' }, { decisions: { approval: decidedBy } });
    await run.once();
    const result = await run.answer('approval', accept({ approve: false, comment: 'not during the freeze' })).result();
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'Not approved by ada@example.com: drop table. Reason: not during the freeze');
    assert.deepEqual(result.structuredContent, {
      approved: false,
      action: 'drop table',
      comment: 'not during the freeze',
      decidedBy: 'ada@example.com',
      decidedAt: '2026-01-02T00:00:00.000Z',
      message: 'Not approved by ada@example.com: drop table. Reason: not during the freeze',
    });
  });
});

describe('approval_gate with four eyes', () => {
  it('marks its question for another approver, and names who decided in the result', async () => {
    const decidedBy = { by: 'jwt|x', name: 'ada@example.com', as: 'approver' as const, via: 'page' as const, at: Date.UTC(2026, 0, 2) };
    const run = testTool(approvalGate, { action: 'deploy web', fourEyes: true }, { decisions: { approval: decidedBy } });
    assert.equal((await run.once()).kind, 'input');
    const meta = run.inputRequests['approval']!.params?.['_meta'] as Record<string, unknown>;
    assert.equal(meta['dev.mcp-tasks-serverless/fourEyes'], true);
    assert.equal(meta['dev.mcp-tasks-serverless/answeredBy'], 'person');
    const result = await run.answer('approval', accept({ approve: true })).result();
    assert.equal(result.structuredContent?.['decidedBy'], 'ada@example.com');
    assert.equal(result.structuredContent?.['decidedAt'], '2026-01-02T00:00:00.000Z');
  });

  it('fails at once where the deployment names no approvers', async () => {
    const run = testTool(approvalGate, { action: 'deploy web', fourEyes: true }, { approvers: false });
    const outcome = await run.once();
    assert.equal(outcome.kind, 'protocol-error');
    assert.match(outcome.kind === 'protocol-error' ? outcome.error.message : '', /names no approvers/);
  });
});
