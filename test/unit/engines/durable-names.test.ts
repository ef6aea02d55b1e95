/** A durable tool's names: qualified function ARNs, execution ARNs, the IAM resource of a function's executions, and the payload's limit. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  durablePayload,
  executionsResourceOf,
  isDurableExecutionArn,
  isQualifiedFunctionArn,
  MAX_PAYLOAD_BYTES,
  partsOfExecutionArn,
} from '../../../shared/engines/durable/index.ts';
import { ClientError } from '../../../shared/errors.ts';

const FUNCTION = 'arn:aws:lambda:eu-west-1:123456789012:function:review-claim';
const EXECUTION = `${FUNCTION}:3/durable-execution/task-1/0b7c1f4e-5d2a-4c1e-9f1a-2b3c4d5e6f70`;

describe('durable names', () => {
  it('a qualified function ARN names a version, an alias or $LATEST; an unqualified one is not', () => {
    const cases: [string, boolean][] = [
      [`${FUNCTION}:3`, true],
      [`${FUNCTION}:live`, true],
      [`${FUNCTION}:$LATEST`, true],
      [FUNCTION, false],
      ['arn:aws:states:eu-west-1:123456789012:stateMachine:review-claim', false],
      [`${FUNCTION}:3/durable-execution/a/b`, false],
    ];
    assert.deepEqual(
      cases.map(([arn]) => [arn, isQualifiedFunctionArn(arn)]),
      cases,
    );
  });

  it("an execution's ARN gives its qualified function, its name (the task) and Lambda's id", () => {
    assert.equal(isDurableExecutionArn(EXECUTION), true);
    assert.deepEqual(partsOfExecutionArn(EXECUTION), {
      functionArn: `${FUNCTION}:3`,
      name: 'task-1',
      id: '0b7c1f4e-5d2a-4c1e-9f1a-2b3c4d5e6f70',
    });
    assert.equal(partsOfExecutionArn(`${FUNCTION}/durable-execution/task-1/x`), undefined);
    assert.equal(isDurableExecutionArn('arn:aws:states:eu-west-1:123456789012:execution:m:task-1'), false);
  });

  it("the IAM resource of a function's executions is its qualified ARN's, never wider; an unqualified ARN is refused", () => {
    assert.equal(executionsResourceOf(`${FUNCTION}:live`), `${FUNCTION}:live/durable-execution/*`);
    assert.throws(() => executionsResourceOf(FUNCTION), /qualified ARN/);
  });

  it('the payload is the arguments as canonical JSON, the same for every retry', () => {
    assert.equal(durablePayload({ b: 1, a: { d: [2], c: 'x' } }), '{"a":{"c":"x","d":[2]},"b":1}');
  });

  it('arguments over 256 KB as JSON are refused with -32602, naming both sizes', () => {
    const fits = { text: 'x'.repeat(MAX_PAYLOAD_BYTES - '{"text":""}'.length) };
    assert.equal(Buffer.byteLength(durablePayload(fits)), MAX_PAYLOAD_BYTES);
    const over = { text: `${fits.text}é` };
    assert.throws(
      () => durablePayload(over),
      (error: unknown) =>
        error instanceof ClientError &&
        error.code === -32602 &&
        /262,146 bytes/.test(error.message) &&
        /at most 262,144/.test(error.message),
    );
  });
});
