/**
 * What the console calls things: statuses in words for each viewer, times,
 * labels, the approval card's shape, task data drawn as rows and tables, a
 * list's summary line and filters, and each field's problem in words.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { fieldProblems, formContent, formFields } from '../../../shared/console/forms.ts';
import { argumentSummary, listFilter, shown } from '../../../shared/console/lists.ts';
import { absoluteUtc, relativeTime } from '../../../shared/console/times.ts';
import { valueNodes } from '../../../shared/console/values.ts';
import { isApprovalCard, labelOf, statusWords, whoAsks } from '../../../shared/console/words.ts';
import { ANSWERED_BY_META, FOUR_EYES_META, type InputRequest, type TaskRecord } from '../../../shared/tasks/model.ts';

const OWNER = 'jwt|9|https://i|5|alice';
const base = {
  taskId: 't1',
  owner: OWNER,
  tool: 'approval_gate',
  arguments: { action: 'deploy web', fourEyes: true },
  clientCapabilities: {},
  createdAt: 0,
  lastUpdatedAt: 0,
  ttlMs: 1,
  pollIntervalMs: 1,
  inputResponses: {},
  issuedKeys: [],
  cancelRequested: false,
  attempts: 0,
  version: 1,
} satisfies Omit<TaskRecord, 'status'>;
const approval = (fourEyes: boolean): InputRequest => ({
  method: 'elicitation/create',
  params: {
    message: 'Approve?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } }, required: ['approve'] },
    _meta: { [ANSWERED_BY_META]: 'person', ...(fourEyes ? { [FOUR_EYES_META]: true } : {}) },
  },
});
const owner = { principal: OWNER, approver: false };
const approver = { principal: 'jwt|9|https://i|3|ada', approver: true };

describe('status words', () => {
  it('say each status for the viewer, and a "no" as Not approved', () => {
    const waiting = (fourEyes: boolean): TaskRecord => ({
      ...base,
      status: 'input_required',
      inputRequests: { approval: approval(fourEyes) },
    });
    const cases: Array<[TaskRecord, typeof owner, string]> = [
      [{ ...base, status: 'working' }, owner, 'Running'],
      [waiting(false), owner, 'Waiting for your answer'],
      [waiting(true), owner, 'Waiting for an approver'],
      [waiting(true), approver, 'Waiting for your answer'],
      [{ ...base, status: 'completed', result: { content: [] } }, owner, 'Done'],
      [{ ...base, status: 'completed', result: { isError: true } }, owner, 'Ended with an error'],
      [
        {
          ...base,
          status: 'completed',
          result: { isError: true },
          inputResponses: { approval: { action: 'accept', content: { approve: false } } },
          decisions: { approval: { by: 'x', as: 'approver', via: 'page', at: 1 } },
        },
        owner,
        'Not approved',
      ],
      [{ ...base, status: 'failed', error: { code: -32603, message: 'x' } }, owner, 'Failed'],
      [{ ...base, status: 'cancelled' }, owner, 'Cancelled'],
    ];
    for (const [task, viewer, words] of cases) assert.equal(statusWords(task, viewer).words, words, `${task.status} ${words}`);
  });

  it('name who asks by the kept claim, else the subject', () => {
    assert.equal(whoAsks({ ...base, status: 'working' }), 'alice');
    assert.equal(whoAsks({ ...base, status: 'working', requester: 'Alice Liddell' }), 'Alice Liddell');
    assert.equal(whoAsks({ ...base, status: 'working', owner: 'local' }), 'local');
  });

  it('know an approval card by its schema, whatever the tool', () => {
    assert.equal(isApprovalCard(approval(false)), true);
    const other: InputRequest = {
      method: 'elicitation/create',
      params: { requestedSchema: { properties: { approve: { type: 'boolean' } } } },
    };
    assert.equal(isApprovalCard(other), false, 'approve must be required');
    const more = structuredClone(approval(false));
    (more.params!['requestedSchema'] as { properties: Record<string, unknown> }).properties['extra'] = { type: 'string' };
    assert.equal(isApprovalCard(more), false);
  });
});

describe('times and labels', () => {
  it('say times relative to now, and absolute in UTC', () => {
    const now = Date.UTC(2026, 11, 6, 12, 0);
    assert.equal(relativeTime(now - 10_000, now), 'just now');
    assert.equal(relativeTime(now - 5 * 60_000, now), '5 minutes ago');
    assert.equal(relativeTime(now + 7 * 86_400_000, now), 'in 1 week');
    assert.equal(relativeTime(now - 3_600_000, now), '1 hour ago');
    assert.equal(relativeTime(now + 2 * 86_400_000, now), 'in 2 days');
    assert.equal(absoluteUtc(now), '6 Dec 2026, 12:00 UTC');
    assert.equal(labelOf('fourEyes'), 'Four eyes');
    assert.equal(labelOf('decided_by'), 'Decided by');
  });
});

describe('task data drawn', () => {
  it('as text, rows, tables and lists, never markup', () => {
    assert.deepEqual(valueNodes('<b>x</b>'), { tag: 'span', attrs: { class: 'text' }, children: ['<b>x</b>'] });
    assert.deepEqual(valueNodes({ fourEyes: true }), {
      tag: 'dl',
      attrs: { class: 'rows' },
      children: [
        { tag: 'dt', children: ['Four eyes'] },
        { tag: 'dd', children: [{ tag: 'span', children: ['Yes'] }] },
      ],
    });
    const table = valueNodes([{ a: 1 }, { a: 2, b: 'x' }]) as { tag: string; children: Array<{ tag: string }> };
    assert.equal(table.tag, 'table');
    assert.equal((valueNodes(['a', 'b']) as { tag: string }).tag, 'ul');
    assert.equal((valueNodes({ a: { b: { c: { d: 1 } } } }) as { tag: string }).tag, 'dl');
  });
});

describe('the list', () => {
  it('tells runs apart by a summary line, and filters by kind and text', () => {
    assert.equal(
      argumentSummary({ action: 'deploy web', fourEyes: true, items: [1, 2] }),
      'Action: deploy web · Four eyes: Yes · Items: 2 items',
    );
    assert.ok(argumentSummary({ text: 'x'.repeat(500) }).length <= 90);
    const running: TaskRecord = { ...base, status: 'working' };
    const fourEyes: TaskRecord = { ...base, status: 'input_required', inputRequests: { approval: approval(true) } };
    assert.equal(shown(running, listFilter('running', ''), owner), true);
    assert.equal(shown(running, listFilter('ended', ''), owner), false);
    assert.equal(shown(fourEyes, listFilter('waiting', ''), owner), false, 'her own four-eyes question is not for her');
    assert.equal(shown(fourEyes, listFilter('waiting', ''), approver), true);
    assert.equal(shown(running, listFilter('all', 'DEPLOY'), owner), true);
    assert.equal(shown(running, listFilter('all', 'rotate'), owner), false);
    assert.deepEqual(listFilter('nonsense', '  a  '), { show: 'all', text: 'a' });
  });
});

describe('field problems in words', () => {
  it('say what to change, beside each field', () => {
    const fields = formFields({
      type: 'object',
      properties: {
        email: { type: 'string', format: 'email' },
        team: { type: 'integer', minimum: 1 },
        name: { type: 'string', minLength: 2 },
        plan: { type: 'string', enum: ['a'] },
      },
      required: ['plan'],
    });
    const content = formContent(fields, { 'field.email': 'nope', 'field.team': '0', 'field.name': 'x' });
    assert.deepEqual(fieldProblems(fields, content), {
      email: 'Enter an email address, such as name@example.com.',
      team: 'Enter 1 or more.',
      name: 'Use at least 2 characters.',
      plan: 'This is required: give an answer.',
    });
    assert.deepEqual(fieldProblems(fields, formContent(fields, { 'field.email': 'a@b.co', 'field.plan': 'a' })), {});
  });
});
