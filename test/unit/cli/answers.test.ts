import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { GivenAnswers } from '../../../bin/cli/answers.ts';
import type { InputRequest } from '../../../shared/tasks/model.ts';

const form = (properties: Record<string, unknown>, required: string[] = []): InputRequest => ({
  method: 'elicitation/create',
  params: { message: 'm', requestedSchema: { type: 'object', properties, required } },
});

const approval = form(
  {
    approve: { type: 'boolean' },
    comment: { type: 'string' },
    count: { type: 'integer' },
    level: { type: 'string', enum: ['low', 'high'] },
  },
  ['approve'],
);

describe('answers given on the command line', () => {
  it('types --answer fields by the requestedSchema', () => {
    const given = GivenAnswers.parse(['approval.approve=yes', 'approval.comment=a=b', 'approval.count=3', 'approval.level=high']);
    assert.deepEqual(given.answer({ approval }), {
      approval: { action: 'accept', content: { approve: true, comment: 'a=b', count: 3, level: 'high' } },
    });
  });

  it('key=decline and key=cancel refuse a request; a round is answered only when every key is given', () => {
    const given = GivenAnswers.parse(['a=decline', 'b=cancel']);
    assert.deepEqual(given.answer({ a: approval, b: approval }), { a: { action: 'decline' }, b: { action: 'cancel' } });
    assert.equal(given.answer({ a: approval, c: approval }), undefined);
  });

  it('reads a file of full results or bare content; flags add to it', () => {
    const file = join(mkdtempSync(join(tmpdir(), 'answers-')), 'answers.json');
    writeFileSync(file, JSON.stringify({ approval: { approve: false }, other: { action: 'accept', content: { approve: true } } }));
    const given = GivenAnswers.parse(['approval.comment=why'], file);
    assert.deepEqual(given.answer({ approval, other: approval }), {
      approval: { action: 'accept', content: { approve: false, comment: 'why' } },
      other: { action: 'accept', content: { approve: true } },
    });
  });

  for (const [flags, message] of [
    [['approval.approve=perhaps'], /approval\.approve must be true or false/],
    [['approval.approve=true', 'approval.count=1.5'], /approval\.count must be an integer/],
    [['approval.approve=true', 'approval.level=medium'], /approval\.level must be one of low, high/],
    [['approval.comment=x'], /lacks the required field "approve"/],
  ] as const) {
    it(`refuses ${flags.join(' ')}`, () => {
      assert.throws(() => GivenAnswers.parse([...flags]).answer({ approval }), message);
    });
  }

  it('refuses a malformed flag', () => {
    assert.throws(() => GivenAnswers.parse(['approve']), /key\.field=value/);
    assert.throws(() => GivenAnswers.parse(['approval=maybe']), /accept, decline or cancel/);
  });
});
