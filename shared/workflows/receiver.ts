/**
 * The receiver: the function a workflow's states invoke to reach its task.
 *
 * - A question, from a task-token state
 *   (`arn:aws:states:::lambda:invoke.waitForTaskToken`), with the payload
 *   `{ taskId: $$.Execution.Name, execution: $$.Execution.Id, state: $$.State.Name,
 *   key, message, requestedSchema, answeredBy?, fourEyes?, token: $$.Task.Token }`:
 *   recorded on the task with its token sealed (`tokens.ts`); a suspended
 *   task is woken (recorded, then enqueued: a failed enqueue is logged and
 *   left to the sweeper). The state then waits for its token: the task's
 *   run asks the question and sends the answer back.
 * - Progress, from a fire-and-forget invoke (`lambda:invoke` with
 *   `InvocationType: Event`): `{ taskId, execution, progress }`, the task's
 *   status while it runs.
 *
 * Only the execution the task follows is heard (`workflow.execution` on the
 * row, or the one its binding names until the run records it): anything
 * else, or a task that has ended, is refused and logged. A refused question
 * fails its state with a named error ({@link REFUSED_ERROR}); a malformed
 * payload with {@link MALFORMED_ERROR}. The token is never logged.
 */

import { type ActionStore, TaskActions } from '../actions/task-actions.ts';
import type { CallbackKeys } from '../callback-tokens.ts';
import { taskOfExecution } from '../engines/names.ts';
import { executionNameOf, isExecutionArn } from '../engines/stepfunctions/index.ts';
import { TasksError } from '../errors.ts';
import { errorName, type Log } from '../log.ts';
import type { TaskQueue } from '../queue/queue.ts';
import { LimitExceededError, MAX_STATUS_MESSAGE_BYTES, MAX_TASK_ID_LENGTH, truncateUtf8 } from '../tasks/limits.ts';
import type { WorkflowWriteResult } from '../tasks/workflows-model.ts';
import { expectedBy, type WorkflowBindings } from './bindings.ts';
import { questionIdOf, sealTaskToken } from './tokens.ts';

/** The error a refused question fails its state with (a task that ended, or follows another execution). */
export const REFUSED_ERROR = 'mcp-tasks.QuestionRefused';

/** The error a malformed payload fails its state with. */
export const MALFORMED_ERROR = 'mcp-tasks.MalformedPayload';

export interface ReceiverDeps {
  store: ActionStore;
  queue: TaskQueue;
  keys: CallbackKeys;
  bindings: WorkflowBindings;
  log: Log;
  now?: () => number;
}

/** What the receiver answers an invoke it accepted (a waiting state ignores it; its token is what it waits for). */
export interface ReceiverAnswer {
  status: WorkflowWriteResult;
}

/** A refusal, named so that the machine can `Catch` it. */
class ReceiverRefusal extends TasksError {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}

const KEY = /^[A-Za-z0-9_.-]{1,64}$/;
const MAX_TOKEN_CHARS = 2048;
const MAX_SCHEMA_BYTES = 16 * 1024;
const MAX_STATE_CHARS = 80;

type Payload =
  | {
      kind: 'question';
      taskId: string;
      execution: string;
      key: string;
      token: string;
      state?: string;
      message: string;
      requestedSchema: Record<string, unknown>;
      answeredBy?: 'person';
      fourEyes?: boolean;
    }
  | { kind: 'progress'; taskId: string; execution: string; progress: string };

export function workflowReceiver(deps: ReceiverDeps): (payload: unknown) => Promise<ReceiverAnswer> {
  const actions = new TaskActions({ store: deps.store, queue: deps.queue, log: deps.log, now: deps.now ?? Date.now });
  const expected = expectedBy(deps.bindings);
  return async (raw) => {
    const payload = parse(raw);
    if (typeof payload === 'string') {
      deps.log({ event: 'workflow-refused', reason: 'malformed', problem: payload });
      throw new ReceiverRefusal(MALFORMED_ERROR, payload);
    }
    const { taskId } = payload;
    if (payload.kind === 'progress') {
      const status = await actions.workflowProgress(
        taskId,
        payload.execution,
        expected,
        truncateUtf8(payload.progress, MAX_STATUS_MESSAGE_BYTES),
      );
      deps.log({ event: 'workflow-progress', taskId, status });
      return { status };
    }
    let status: WorkflowWriteResult;
    try {
      status = await actions.askFromWorkflow(
        taskId,
        {
          execution: payload.execution,
          id: questionIdOf(payload.token),
          key: payload.key,
          question: {
            message: payload.message,
            requestedSchema: payload.requestedSchema,
            ...(payload.state === undefined ? {} : { state: payload.state }),
            ...(payload.answeredBy === undefined ? {} : { answeredBy: payload.answeredBy }),
            ...(payload.fourEyes === undefined ? {} : { fourEyes: payload.fourEyes }),
          },
          sealedToken: await sealTaskToken(deps.keys, taskId, payload.token),
        },
        expected,
      );
    } catch (error) {
      if (!(error instanceof LimitExceededError)) throw error;
      deps.log({ event: 'workflow-refused', taskId, key: payload.key, reason: 'too-large', error: errorName(error) });
      throw new ReceiverRefusal(REFUSED_ERROR, 'The task has no room left for this question');
    }
    if (status === 'ended' || status === 'not-followed') {
      deps.log({ event: 'workflow-refused', taskId, key: payload.key, reason: status });
      throw new ReceiverRefusal(REFUSED_ERROR, status === 'ended' ? 'The task has ended' : 'The task does not follow this execution');
    }
    deps.log({ event: 'workflow-question', taskId, key: payload.key, status });
    return { status };
  };
}

/** The payload, or what is wrong with it. */
function parse(raw: unknown): Payload | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'The payload must be a JSON object';
  const p = raw as Record<string, unknown>;
  const { taskId: name, execution } = p;
  if (typeof name !== 'string' || name === '' || name.length > MAX_TASK_ID_LENGTH)
    return '"taskId" must be the execution\'s name ($$.Execution.Name)';
  if (typeof execution !== 'string' || !isExecutionArn(execution)) return '"execution" must be the execution ARN ($$.Execution.Id)';
  // The execution is named after its task (a local restart adds a suffix the task id is read back from).
  if (executionNameOf(execution) !== name) return '"taskId" must be the name of the execution ($$.Execution.Name)';
  const { taskId } = taskOfExecution(name);
  if (p['progress'] !== undefined) {
    if (typeof p['progress'] !== 'string' || p['progress'] === '') return '"progress" must be a non-empty string';
    return { kind: 'progress', taskId, execution, progress: p['progress'] };
  }
  const { key, token, message, requestedSchema, state, answeredBy, fourEyes } = p;
  if (typeof key !== 'string' || !KEY.test(key)) return '"key" must be 1 to 64 letters, digits, "_", "." or "-"';
  if (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_CHARS) return '"token" must be the task token ($$.Task.Token)';
  if (typeof message !== 'string' || message === '' || Buffer.byteLength(message) > MAX_STATUS_MESSAGE_BYTES)
    return '"message" must be a non-empty string of at most 4 KB';
  if (
    typeof requestedSchema !== 'object' ||
    requestedSchema === null ||
    Array.isArray(requestedSchema) ||
    (requestedSchema as Record<string, unknown>)['type'] !== 'object'
  ) {
    return '"requestedSchema" must be a JSON Schema object ({"type": "object", "properties": …})';
  }
  if (Buffer.byteLength(JSON.stringify(requestedSchema)) > MAX_SCHEMA_BYTES) return '"requestedSchema" may be at most 16 KB';
  if (state !== undefined && (typeof state !== 'string' || state.length > MAX_STATE_CHARS))
    return '"state" must be the state name ($$.State.Name)';
  if (answeredBy !== undefined && answeredBy !== 'person') return '"answeredBy" may only be "person"';
  if (fourEyes !== undefined && typeof fourEyes !== 'boolean') return '"fourEyes" must be true or false';
  return {
    kind: 'question',
    taskId,
    execution,
    key,
    token,
    message,
    requestedSchema: requestedSchema as Record<string, unknown>,
    ...(state === undefined ? {} : { state }),
    ...(answeredBy === undefined ? {} : { answeredBy }),
    ...(fourEyes === undefined ? {} : { fourEyes }),
  };
}
