/** Names and ARNs of executions, the bindings, the looks' schedule and what goes back to a task-token state. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { principalFor } from '../../../shared/auth/principal.ts';
import { restartedName, taskOfExecution, workflowInput } from '../../../shared/engines/names.ts';
import {
  executionArnOf,
  executionNameOf,
  isExecutionArn,
  isMachineArn,
  withReceiver,
} from '../../../shared/engines/stepfunctions/index.ts';
import { expectedExecution, parseWorkflowBindings } from '../../../shared/workflows/bindings.ts';
import { DECLINED_ERROR, elicitParamsOf, REJECTED_ERROR, replyOf } from '../../../shared/workflows/replies.ts';
import { checksWithin, FIRST_CHECK_MS, MAX_CHECK_GAP_MS, nextCheckAt } from '../../../shared/workflows/schedule.ts';
import { MACHINE } from '../../support/workflow-fakes.ts';

const TASK = '0b6b2a3e-8f43-4b3b-9d6c-6f2d1c7e9a10';
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe('execution names', () => {
  it('an execution is named after its task; its ARN is the machine ARN with the name', () => {
    const arn = executionArnOf(MACHINE, TASK);
    assert.equal(arn, `arn:aws:states:us-east-1:123456789012:execution:deploy-release:${TASK}`);
    assert.ok(isExecutionArn(arn));
    assert.ok(isMachineArn(MACHINE));
    assert.ok(!isMachineArn(arn));
    assert.equal(executionNameOf(arn), TASK);
  });

  it('a restart is named after the task too, and read back to it', () => {
    assert.deepEqual(taskOfExecution(TASK), { taskId: TASK, restart: 0 });
    assert.deepEqual(taskOfExecution(restartedName(TASK, 3)), { taskId: TASK, restart: 3 });
    assert.deepEqual(taskOfExecution(`${TASK}--restart-x`), { taskId: `${TASK}--restart-x`, restart: 0 });
    assert.ok(restartedName(TASK, 12).length <= 80, "Step Functions' limit on names");
    assert.ok(isExecutionArn(executionArnOf(MACHINE, restartedName(TASK, 1))));
  });

  it("the input is the arguments as canonical JSON: a retry's is identical whatever the key order", () => {
    assert.equal(workflowInput({ release: 'a', regions: ['x'] }), workflowInput({ regions: ['x'], release: 'a' }));
    assert.equal(workflowInput({ b: 1, a: { d: 2, c: 3 } }), '{"a":{"c":3,"d":2},"b":1}');
  });

  it("a definition's receiver placeholder is replaced everywhere", () => {
    const placeholder = ['$', '{ReceiverFunctionArn}'].join('');
    assert.equal(withReceiver(`{"A":"${placeholder}","B":"${placeholder}"}`, 'arn:x'), '{"A":"arn:x","B":"arn:x"}');
  });
});

describe('bindings', () => {
  it('read from JSON, tool name to machine ARN; unset is none', () => {
    assert.deepEqual(parseWorkflowBindings(`{"deploy_release":"${MACHINE}"}`, 'X'), { deploy_release: MACHINE });
    assert.deepEqual(parseWorkflowBindings(undefined, 'X'), {});
    assert.deepEqual(parseWorkflowBindings(' ', 'X'), {});
    assert.throws(() => parseWorkflowBindings('[]', 'X'), /X must be a JSON object/);
    assert.throws(() => parseWorkflowBindings('{"t":"arn:aws:states:us-east-1:1:stateMachine:m"}', 'X'), /binding of "t"/);
  });

  it('name the execution a task of a bound tool starts, and none for another tool', () => {
    assert.equal(expectedExecution({ deploy_release: MACHINE }, 'deploy_release', TASK), executionArnOf(MACHINE, TASK));
    assert.equal(expectedExecution({ deploy_release: MACHINE }, 'other', TASK), undefined);
    assert.equal(expectedExecution({ deploy_release: MACHINE }, 'constructor', TASK), undefined);
  });
});

describe('looks at an execution whose end never came', () => {
  it('first at 15 minutes, then doubling gaps up to a day', () => {
    const at = [nextCheckAt(0, 0)];
    while (at.length < 10) at.push(nextCheckAt(0, at.at(-1)!));
    const gaps = at.map((t, i) => t - (at[i - 1] ?? 0));
    assert.deepEqual(
      gaps.map((gap) => gap / MINUTE),
      [15, 30, 60, 120, 240, 480, 960, 1440, 1440, 1440],
    );
    assert.equal(nextCheckAt(1000, 1000), 1000 + FIRST_CHECK_MS);
    assert.equal(Math.max(...gaps), MAX_CHECK_GAP_MS);
  });

  it('none for a 10-minute execution, at most a dozen for a 7-day one', () => {
    assert.equal(checksWithin(10 * MINUTE), 0);
    assert.equal(checksWithin(7 * 24 * HOUR), 12);
  });
});

describe('what goes back to a task-token state', () => {
  const approval = {
    n: 1,
    key: 'approval',
    message: 'Deploy?',
    requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' }, comment: { type: 'string' } } },
    answeredBy: 'person' as const,
  };
  const choice = {
    n: 2,
    key: 'region',
    message: 'Where?',
    requestedSchema: { type: 'object', properties: { region: { type: 'string' } } },
  };

  it('an accepted answer: its fields as the output', () => {
    assert.deepEqual(replyOf(approval, { action: 'accept', content: { approve: true, comment: 'go' } }), {
      output: '{"approve":true,"comment":"go"}',
    });
    assert.deepEqual(replyOf(choice, { action: 'accept', content: { region: 'eu-west-1' } }), { output: '{"region":"eu-west-1"}' });
    assert.deepEqual(replyOf(choice, { action: 'accept' }), { output: '{}' });
  });

  it('an approval turned down: Rejected, its comment the cause', () => {
    assert.deepEqual(replyOf(approval, { action: 'accept', content: { approve: false, comment: 'not this week' } }), {
      failure: { error: REJECTED_ERROR, cause: 'not this week' },
    });
    assert.deepEqual(replyOf(approval, { action: 'accept', content: { approve: false } }), {
      failure: { error: REJECTED_ERROR, cause: 'Rejected' },
    });
  });

  const bob = {
    by: principalFor('https://id.example.com', 'bob'),
    name: 'Bob Example',
    as: 'approver' as const,
    via: 'page' as const,
    at: 1,
  };

  it('who decided reaches the workflow: decidedBy { subject, name? } beside the fields, and named in a rejection', () => {
    assert.deepEqual(JSON.parse(outputOf(replyOf(approval, { action: 'accept', content: { approve: true }, decidedBy: bob }))), {
      approve: true,
      decidedBy: { subject: 'bob', name: 'Bob Example' },
    });
    // An open endpoint's principal is no token's: it is the subject itself; no name, none given.
    const local = { by: 'local', as: 'owner' as const, via: 'page' as const, at: 1 };
    assert.deepEqual(JSON.parse(outputOf(replyOf(choice, { action: 'accept', content: { region: 'x' }, decidedBy: local }))), {
      region: 'x',
      decidedBy: { subject: 'local' },
    });
    assert.deepEqual(replyOf(approval, { action: 'accept', content: { approve: false, comment: 'not this week' }, decidedBy: bob }), {
      failure: { error: REJECTED_ERROR, cause: 'Rejected by Bob Example: not this week' },
    });
    assert.deepEqual(replyOf(approval, { action: 'accept', content: { approve: false, comment: '' }, decidedBy: local }), {
      failure: { error: REJECTED_ERROR, cause: 'Rejected by local' },
    });
  });

  it('a declined or dismissed question: Declined', () => {
    assert.deepEqual(replyOf(approval, { action: 'decline' }), {
      failure: { error: DECLINED_ERROR, cause: 'The question "approval" was declined' },
    });
    assert.deepEqual(replyOf(choice, { action: 'cancel' }), {
      failure: { error: DECLINED_ERROR, cause: 'The question "region" was dismissed' },
    });
  });

  it('the question is asked as the state asked it', () => {
    assert.deepEqual(elicitParamsOf({ ...approval, fourEyes: true }), {
      message: 'Deploy?',
      requestedSchema: approval.requestedSchema,
      answeredBy: 'person',
      fourEyes: true,
    });
    assert.deepEqual(elicitParamsOf(choice), { message: 'Where?', requestedSchema: choice.requestedSchema });
  });
});

function outputOf(reply: ReturnType<typeof replyOf>): string {
  assert.ok('output' in reply, 'an output, not a failure');
  return reply.output;
}
