/**
 * `eventsOf`: the events a task's row implies, as the functions publish them
 * and the task page lists them. What goes out is the contract of
 * docs/operators.md; what never goes out (arguments, answers, results, error
 * messages, owners) is checked on the serialised events.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DETAIL_TYPES, EVENTS_VERSION, eventsOf, MAX_EVENT_MESSAGE_CHARS } from '../../../shared/events/task-events.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import type { InputRequest, TaskBase, TaskRecord } from '../../../shared/tasks/model.ts';
import { ANSWERED_BY_META, EVENT_MESSAGE_META } from '../../../shared/tasks/model.ts';

const CREATED = Date.parse('2026-12-01T10:00:00.000Z');
const WAIT_MS = 7 * 86_400_000;
const SECRET_ARGUMENT = 'deploy web@1.4.2 to the payroll cluster';
const SECRET_ANSWER = 'the answer nobody else may read';
const SECRET_RESULT = 'a result only the owner may read';
const CONTEXT = {
  links: new DeploymentLinks('https://tasks.example.com/'),
  titleOf: (tool: string) => (tool === 'approval_gate' ? 'Approval gate' : undefined),
  maxInputWaitMs: WAIT_MS,
};

function base(overrides: Partial<TaskBase> = {}): TaskBase {
  return {
    taskId: 'a1b2c3d4-0000-4000-8000-000000000001',
    owner: 'https://issuer.example.com/|alice',
    tool: 'approval_gate',
    arguments: { action: SECRET_ARGUMENT },
    clientCapabilities: { elicitation: {} },
    createdAt: CREATED,
    lastUpdatedAt: CREATED + 5_000,
    ttlMs: 3_600_000,
    pollIntervalMs: 1000,
    inputResponses: { earlier: { action: 'accept', content: { note: SECRET_ANSWER } } },
    issuedKeys: ['earlier', 'approval'],
    cancelRequested: false,
    attempts: 0,
    version: 4,
    ...overrides,
  };
}

function question(message: string, meta: Record<string, unknown>): InputRequest {
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message, requestedSchema: { type: 'object', properties: {} }, _meta: meta },
  };
}

const PERSON = { [ANSWERED_BY_META]: 'person' };

function waiting(inputRequests: Record<string, InputRequest>, overrides: Partial<TaskBase> = {}): TaskRecord {
  const opened = CREATED + 5_000;
  return { ...base({ sweepAt: opened + WAIT_MS, ...overrides }), status: 'input_required', inputRequests };
}

describe('eventsOf', () => {
  it("a question for a person: task id, tool, the task page's link, the deadline, the tool's title for its message", () => {
    const task = waiting({ approval: question(`Approve: ${SECRET_ARGUMENT}?`, PERSON) });
    const events = eventsOf(task, CONTEXT);
    assert.deepEqual(events, [
      {
        detailType: DETAIL_TYPES.question,
        time: CREATED + 5_000,
        detail: {
          version: EVENTS_VERSION,
          eventId: `${task.taskId}:question:${CREATED + 5_000}`,
          taskId: task.taskId,
          tool: 'approval_gate',
          createdAt: '2026-12-01T10:00:00.000Z',
          status: 'input_required',
          openedAt: '2026-12-01T10:00:05.000Z',
          deadline: '2026-12-08T10:00:05.000Z',
          taskUrl: `https://tasks.example.com/console/tasks/${task.taskId}`,
          questions: [{ key: 'approval', message: 'Approval gate' }],
        },
      },
    ]);
    const text = JSON.stringify(events);
    for (const secret of [SECRET_ARGUMENT, SECRET_ANSWER, 'alice'])
      assert.ok(!text.includes(secret), `the event must not carry "${secret}"`);
  });

  it('carries the message of a question whose tool lets it go out (eventMessage), cut to its limit', () => {
    const long = 'x'.repeat(MAX_EVENT_MESSAGE_CHARS + 50);
    const task = waiting({
      short: question('Sign off the quarterly report?', { ...PERSON, [EVENT_MESSAGE_META]: true }),
      long: question(long, { ...PERSON, [EVENT_MESSAGE_META]: true }),
    });
    const [event] = eventsOf(task, CONTEXT);
    assert.ok(event?.detail.status === 'input_required');
    assert.deepEqual(event.detail.questions[0], { key: 'short', message: 'Sign off the quarterly report?' });
    assert.equal(event.detail.questions[1]?.message.length, MAX_EVENT_MESSAGE_CHARS);
  });

  it("falls back to the tool's name when it has no title", () => {
    const task = waiting({ approval: question('Go?', PERSON) }, { tool: 'untitled_tool' });
    const [event] = eventsOf(task, CONTEXT);
    assert.ok(event?.detail.status === 'input_required');
    assert.deepEqual(event.detail.questions, [{ key: 'approval', message: 'untitled_tool' }]);
  });

  it("lists only the questions for a person, and none while the task waits only on a client's answers", () => {
    const mixed = waiting({ person: question('Approve?', PERSON), model: question('Which file?', {}) });
    const [event] = eventsOf(mixed, CONTEXT);
    assert.ok(event?.detail.status === 'input_required');
    assert.deepEqual(
      event.detail.questions.map((q) => q.key),
      ['person'],
    );
    assert.deepEqual(eventsOf(waiting({ model: question('Which file?', {}) }), CONTEXT), []);
  });

  it('dates a question from its deadline, so answering part of a set keeps its time and id', () => {
    const opened = waiting({ a: question('A?', PERSON), b: question('B?', PERSON) });
    const partlyAnswered = waiting({ b: question('B?', PERSON) }, { lastUpdatedAt: CREATED + 60_000, version: 5 });
    const [first] = eventsOf(opened, CONTEXT);
    const [later] = eventsOf(partlyAnswered, CONTEXT);
    assert.equal(later?.detail.eventId, first?.detail.eventId);
    assert.equal(later?.time, first?.time);
  });

  it('without a deployment URL or a wait limit: no link, no deadline, dated by the last change', () => {
    const task = waiting({ approval: question('Go?', PERSON) });
    const { sweepAt: _none, ...withoutDeadline } = task;
    const [event] = eventsOf(withoutDeadline as TaskRecord, { links: new DeploymentLinks(undefined) });
    assert.ok(event?.detail.status === 'input_required');
    assert.equal(event.detail.taskUrl, undefined);
    assert.equal(event.detail.deadline, undefined);
    assert.equal(event.detail.openedAt, new Date(task.lastUpdatedAt).toISOString());
  });

  it('an end: completed, failed (with its code, not its message) and cancelled, with the times', () => {
    const ended = CREATED + 2_310;
    const rows: TaskRecord[] = [
      { ...base({ lastUpdatedAt: ended }), status: 'completed', result: { content: [{ type: 'text', text: SECRET_RESULT }] } },
      { ...base({ lastUpdatedAt: ended }), status: 'failed', error: { code: -32603, message: `failed on ${SECRET_ARGUMENT}` } },
      { ...base({ lastUpdatedAt: ended, statusMessage: `Ended by an operator: ${SECRET_ARGUMENT}` }), status: 'cancelled' },
    ];
    const events = rows.map((task) => eventsOf(task, CONTEXT));
    assert.deepEqual(
      events.map((list) => list.map((event) => event.detailType)),
      [[DETAIL_TYPES.completed], [DETAIL_TYPES.failed], [DETAIL_TYPES.cancelled]],
    );
    assert.deepEqual(events[1]?.[0]?.detail, {
      version: EVENTS_VERSION,
      eventId: `${rows[1]!.taskId}:failed`,
      taskId: rows[1]!.taskId,
      tool: 'approval_gate',
      createdAt: '2026-12-01T10:00:00.000Z',
      status: 'failed',
      endedAt: '2026-12-01T10:00:02.310Z',
      durationMs: 2_310,
      errorCode: -32603,
    });
    for (const list of events) assert.equal(list[0]?.time, ended);
    const text = JSON.stringify(events);
    for (const secret of [SECRET_ARGUMENT, SECRET_ANSWER, SECRET_RESULT, 'alice']) {
      assert.ok(!text.includes(secret), `no event may carry "${secret}"`);
    }
  });

  it('nothing for a working task', () => {
    assert.deepEqual(eventsOf({ ...base(), status: 'working' }, CONTEXT), []);
  });
});

describe('DeploymentLinks.taskPage', () => {
  it("is the console's page of the task under the deployment's URL, the id escaped", () => {
    assert.equal(new DeploymentLinks('https://tasks.example.com//').taskPage('a/b'), 'https://tasks.example.com/console/tasks/a%2Fb');
    assert.equal(new DeploymentLinks(undefined).taskPage('x'), undefined);
  });
});
