/**
 * The cost figures docs/capacity.md and docs/deploying.md state, with the
 * condition each holds under, are the capacity model's and the bench's
 * minima (which `test/integration/capacity-model.test.ts` ties to what the
 * bench measures): a simple task on the default deployment, where a console
 * lists tasks, and with an issuer (the default cap); a polled job's further check.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { capacity, defaultDeployment } from '../../../infra/capacity.ts';
import { pollMin } from '../../bench/callback-vs-poll.ts';
import { SIMPLE_MIN, WITH_ISSUER_MIN } from '../../bench/minima.ts';

const read = (path: string) => readFileSync(new URL(`../../../${path}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');
const simple = { tasksPerSecond: 1, taskSeconds: 0.01, pollsPerTask: 0, inputRounds: 0, steps: 0, waitingShare: 0 };

/** A simple task's writes and write units on a deployment with these conditions, by the model. */
function simpleTask(conditions: { listed?: boolean; issuer?: boolean } = {}) {
  const task = capacity(simple, { ...defaultDeployment(), ...conditions }).perTask;
  return { writes: task.ddbWrites, wcu: task.tableWcu + task.indexWcu, table: task.tableWcu, index: task.indexWcu };
}

describe('the cost docs', () => {
  const open = simpleTask();
  const listed = simpleTask({ listed: true });
  const issuer = simpleTask({ listed: true, issuer: true });

  it("the model's three cases are the bench's minima (npm start lists tasks; with an issuer the cap adds its writes)", () => {
    assert.deepEqual([open.writes, open.wcu, listed.wcu, issuer.writes, issuer.wcu], [3, 5, 6, 5, 8]);
    assert.equal(listed.wcu, SIMPLE_MIN.wcu);
    assert.deepEqual([issuer.writes, issuer.wcu], [WITH_ISSUER_MIN.ddbRequests, WITH_ISSUER_MIN.wcu]);
  });

  it('docs/capacity.md states each case with its condition', () => {
    const doc = read('docs/capacity.md');
    for (const [condition, task] of [
      ['the default', open],
      ['a console lists tasks', listed],
      ['an issuer', issuer],
    ] as const) {
      const row = new RegExp(`\\| [^|]*${condition}[^|]* \\| ${task.writes} \\| ${task.wcu} \\(${task.table} \\+ ${task.index}\\) \\|`);
      assert.match(doc, row, condition);
    }
  });

  it('docs/deploying.md states the same, and what each further check of a polled job adds', () => {
    const doc = read('docs/deploying.md');
    assert.ok(doc.includes(`a simple task takes ${open.writes} DynamoDB writes = ${open.wcu} WCU`));
    assert.ok(doc.includes(`${listed.wcu} WCU where a console lists tasks`));
    assert.ok(doc.includes(`${issuer.writes} writes = ${issuer.wcu} WCU with an issuer`));
    assert.ok(doc.includes(`${open.wcu} WRU (${listed.wcu} where a console lists tasks, ${issuer.wcu} with an issuer)`));
    // A check's writes: its requests less its one journal query.
    const writesPerCheck = pollMin(4).ddbRequests - 4 - (pollMin(3).ddbRequests - 3);
    assert.ok(doc.includes(`every further check adds ${writesPerCheck} writes`), `${writesPerCheck} writes per further check`);
  });
});
