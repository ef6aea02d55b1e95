/** `intake_form` through the tool author's test kit (`#tool-kit`). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accept, decline, testTool, textOf } from '#tool-kit';
import { intakeForm } from '../../../functions/tools/intake-form.ts';

describe('intake_form', () => {
  it('asks two forms at once, then summarises the answers', async () => {
    const run = testTool(intakeForm, { project: 'apollo' });
    assert.equal((await run.once()).kind, 'input');
    assert.deepEqual(Object.keys(run.inputRequests).sort(), ['contact', 'project']);
    run.answer('contact', accept({ name: 'Ada', email: 'ada@example.com' }));
    run.answer('project', accept({ plan: 'team', languages: ['ts', 'go'], team: 4, remote: false }));
    const result = await run.result();
    assert.equal(textOf(result), 'Intake for apollo: Ada <ada@example.com>, plan team, languages ts, go');
    assert.equal(result.structuredContent?.['message'], textOf(result));
  });

  it('a declined form is a tool-level refusal', async () => {
    const result = await testTool(intakeForm, { project: 'apollo' }, { answers: { contact: decline(), project: decline() } }).result();
    assert.equal(result.isError, true);
    assert.equal(textOf(result), 'The intake form for apollo was not filled in');
  });
});
