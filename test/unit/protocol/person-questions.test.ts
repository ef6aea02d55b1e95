/**
 * Questions for a person as each request gets them: URL mode only where the
 * request declared it and the deployment's page identifies the person, the
 * form otherwise; what an in-band answer does; and the fallback's words for
 * a four-eyes question.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TaskActions } from '../../../shared/actions/task-actions.ts';
import { DEFAULT_SETTINGS, loadConfig } from '../../../shared/config.ts';
import { personPageOf } from '../../../shared/console/mode.ts';
import { DeploymentLinks } from '../../../shared/links.ts';
import { callFallbackTool } from '../../../shared/protocol/fallback.ts';
import { inBandAnswers, inputRequestsFor } from '../../../shared/protocol/person-questions.ts';
import { InMemoryTaskQueue } from '../../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, FOUR_EYES_META, type InputRequest, type TaskRecord } from '../../../shared/tasks/model.ts';
import { newTask, storePolicy } from '../../support/factories.ts';

const NOW = 1_000_000;
const form = (meta: Record<string, unknown>): InputRequest => ({
  method: 'elicitation/create',
  params: { mode: 'form', message: 'Approve: deploy?', requestedSchema: { type: 'object', properties: {} }, _meta: meta },
});
const PERSON = form({ [ANSWERED_BY_META]: 'person' });
const ANYONE: InputRequest = { method: 'elicitation/create', params: { mode: 'form', message: 'Name?', requestedSchema: {} } };
const SAMPLE: InputRequest = { method: 'sampling/createMessage', params: { messages: [], maxTokens: 5 } };
const URL_CAPS = { elicitation: { url: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const BASE = { TASKS_TABLE_NAME: 't', TASKS_QUEUE_URL: 'q' };

const waitingTask = (requests: Record<string, InputRequest>): Extract<TaskRecord, { status: 'input_required' }> =>
  ({ ...newTask({ taskId: 't-1', now: NOW }), status: 'input_required', inputRequests: requests }) as unknown as Extract<
    TaskRecord,
    { status: 'input_required' }
  >;

describe('where URL mode may send a person', () => {
  const page = (env: Record<string, string>, base: string | undefined) =>
    personPageOf(loadConfig({ ...BASE, ...env }), new DeploymentLinks(base));

  it('a console that signs people in: yes, with the deployment’s page', () => {
    assert.equal(
      page({ TASKS_CONSOLE_CLIENT_ID: 'c' }, 'https://tasks.example.com')?.('a b'),
      'https://tasks.example.com/console/tasks/a%20b',
    );
  });
  it('an open endpoint: only on loopback (the task id would be its only credential elsewhere)', () => {
    assert.equal(page({}, 'http://127.0.0.1:3000')?.('t'), 'http://127.0.0.1:3000/console/tasks/t');
    assert.equal(page({}, 'https://tasks.example.com')?.('t'), undefined);
    assert.equal(page({ TASKS_CONSOLE: 'open' }, 'https://tasks.example.com')?.('t'), undefined);
  });
  it('an endpoint with an issuer but no console client, or personQuestions=form: never', () => {
    assert.equal(page({ TASKS_CONSOLE_ISSUER: 'https://idp.example.com' }, 'http://127.0.0.1:3000'), undefined);
    assert.equal(page({ TASKS_PERSON_QUESTIONS: 'form', TASKS_CONSOLE_CLIENT_ID: 'c' }, 'https://tasks.example.com'), undefined);
  });
});

describe('questions for a person as a request gets them', () => {
  const pageOf = (taskId: string) => `https://tasks.example.com/console/tasks/${taskId}`;
  const task = waitingTask({ approval: PERSON, name: ANYONE, sample: SAMPLE });

  it('a request with elicitation.url: the question for a person as a URL-mode elicitation; the others as they are', () => {
    const shown = inputRequestsFor(task, URL_CAPS, pageOf);
    assert.deepEqual(shown['name'], ANYONE);
    assert.deepEqual(shown['sample'], SAMPLE);
    const params = shown['approval']?.params ?? {};
    assert.equal(params['mode'], 'url');
    assert.equal(params['url'], pageOf('t-1'));
    assert.equal(params['message'], 'Approve: deploy?');
    assert.equal(typeof params['elicitationId'], 'string');
    assert.equal('requestedSchema' in params, false);
    assert.notEqual(
      inputRequestsFor(waitingTask({ other: PERSON }), URL_CAPS, pageOf)['other']?.params?.['elicitationId'],
      params['elicitationId'],
    );
    assert.deepEqual(inBandAnswers(task, URL_CAPS, pageOf), { person: 'ignore' });
  });

  it('a request without URL mode, or no page to send people to: the form as stored, and in-band answers recorded', () => {
    const formOnly = { elicitation: { form: {} }, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    assert.deepEqual(inputRequestsFor(task, formOnly, pageOf), task.inputRequests);
    assert.deepEqual(inputRequestsFor(task, URL_CAPS, undefined), task.inputRequests);
    assert.deepEqual(
      inputRequestsFor(task, URL_CAPS, () => undefined),
      task.inputRequests,
    );
    assert.deepEqual(inBandAnswers(task, formOnly, pageOf), { person: 'record' });
  });
});

describe('the fallback and a four-eyes question', () => {
  it('task_answer refuses it naming an approver on the page, not the user or the command line', async () => {
    const store = new InMemoryTaskStore(storePolicy());
    const links = new DeploymentLinks('https://tasks.example.com');
    const actions = new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => NOW });
    const deps = {
      actions,
      config: { syncBudgetMs: DEFAULT_SETTINGS.syncBudgetMs },
      now: () => NOW,
      text: { config: DEFAULT_SETTINGS, links, signIn: true },
    };
    await store.create(newTask({ taskId: 'f-1', now: NOW }));
    const claimed = await store.claim('f-1', 'w', NOW);
    assert.ok(claimed);
    await store.finish(
      claimed,
      'w',
      { status: 'input_required', inputRequests: { approval: form({ [ANSWERED_BY_META]: 'person', [FOUR_EYES_META]: true }) } },
      NOW,
    );
    const status = await callFallbackTool('task_status', { taskId: 'f-1' }, 'alice', deps, new AbortController().signal);
    const statusText = status.content.map((block) => String(block['text'])).join('\n');
    assert.match(statusText, /for an approver only; neither you nor the user may answer it/);
    assert.deepEqual(status.structuredContent?.['person'], { answeredBy: 'an approver other than the user', page: links.taskPage('f-1') });
    const refused = await callFallbackTool(
      'task_answer',
      { taskId: 'f-1', answers: { approval: {} } },
      'alice',
      deps,
      new AbortController().signal,
    );
    const text = refused.content.map((block) => String(block['text'])).join('\n');
    assert.match(text, /for an approver other than the user/);
    assert.doesNotMatch(text, /mcp-tasks\.js/, 'no command line: the caller cannot decide it there either');
    assert.equal((await store.get('f-1', 'alice', NOW))?.status, 'input_required');
  });
});
