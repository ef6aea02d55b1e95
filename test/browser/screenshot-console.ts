/**
 * The console the pictures show: the console app in process over the memory
 * store, on a fixed clock, with tasks seeded under fixed ids, served on
 * 127.0.0.1 and signed in (a stand-in sign-in: no issuer) as `ada`, an
 * approver. `npm run screenshots` photographs its pages; the browser lane
 * renders the same pages and compares their text with the committed
 * snapshot, so the pictures in the docs cannot go stale unnoticed.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { approvalGate } from '../../functions/tools/approval-gate.ts';
import { batchProcess } from '../../functions/tools/batch-process.ts';
import { intakeForm } from '../../functions/tools/intake-form.ts';
import { longComputation } from '../../functions/tools/long-computation.ts';
import { TaskActions } from '../../shared/actions/task-actions.ts';
import { principalFor } from '../../shared/auth/principal.ts';
import { createConsoleApp } from '../../shared/console/app.tsx';
import { purposeKeys } from '../../shared/keys.ts';
import { DeploymentLinks } from '../../shared/links.ts';
import { InMemoryTaskQueue } from '../../shared/queue/memory-queue.ts';
import { InMemoryTaskStore } from '../../shared/tasks/memory/index.ts';
import { ANSWERED_BY_META, FOUR_EYES_META, type InputRequest, type TaskOutcome } from '../../shared/tasks/model.ts';

/** The pictures' clock: 7 December 2026, 09:30 UTC. */
export const NOW = Date.UTC(2026, 11, 7, 9, 30);
const MINUTE = 60_000;
const ISSUER = 'https://id.example.com';
const ADA = principalFor(ISSUER, 'ada');
const ALICE = principalFor(ISSUER, 'alice');
const TITLES = new Map([approvalGate, batchProcess, intakeForm, longComputation].map((tool) => [tool.name, tool.title ?? tool.name]));
const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The pages photographed, by name: `docs/console-<name>-desktop.png` and `-phone.png`. */
export const PAGES: Record<string, string> = {
  list: '/console',
  approval: `/console/tasks/${id(1)}`,
  approver: `/console/tasks/${id(6)}`,
  form: `/console/tasks/${id(2)}`,
  result: `/console/tasks/${id(3)}`,
  rejected: `/console/tasks/${id(4)}`,
};

const APPROVAL_SCHEMA = {
  type: 'object',
  properties: { approve: { type: 'boolean', title: 'Approve' }, comment: { type: 'string', title: 'Comment' } },
  required: ['approve'],
};
const approval = (message: string, fourEyes = false): InputRequest => ({
  method: 'elicitation/create',
  params: {
    mode: 'form',
    message,
    requestedSchema: APPROVAL_SCHEMA,
    _meta: { [ANSWERED_BY_META]: 'person', ...(fourEyes ? { [FOUR_EYES_META]: true } : {}) },
  },
});

/** One seeded task: created `ago` minutes before the clock, then run to `outcome` a minute later. */
async function seed(
  store: InMemoryTaskStore,
  n: number,
  task: { owner: string; tool: string; arguments: Record<string, unknown>; requester?: string },
  ago: number,
  outcome?: TaskOutcome,
  answers?: { key: string; content: Record<string, unknown>; by: string; name: string },
): Promise<void> {
  const at = NOW - ago * MINUTE;
  const { requester, ...rest } = task;
  await store.create({
    taskId: id(n),
    ...rest,
    toolTitle: TITLES.get(task.tool) ?? task.tool,
    clientCapabilities: {},
    inputResponses: {},
    now: at,
    ttlMs: 86_400_000,
    pollIntervalMs: 5_000,
    ...(requester ? { requester } : {}),
  });
  if (!outcome) return;
  const claimed = (await store.claim(id(n), 'worker', at + 1_000))!;
  if (answers) {
    const asked = await store.finish(
      claimed,
      'worker',
      { status: 'input_required', inputRequests: { [answers.key]: approval('') } },
      at + 2_000,
    );
    await store.decide(
      asked.taskId,
      { principal: answers.by, name: answers.name, approver: answers.by !== task.owner },
      { [answers.key]: { action: 'accept', content: answers.content } },
      at + 20 * MINUTE,
    );
    const again = (await store.claim(id(n), 'worker', at + 21 * MINUTE))!;
    await store.finish(again, 'worker', outcome, at + 21 * MINUTE + 1_000);
    return;
  }
  await store.finish(claimed, 'worker', outcome, at + MINUTE);
}

async function seedAll(store: InMemoryTaskStore): Promise<void> {
  const ada = { owner: ADA, requester: 'Ada Lovelace' };
  await seed(store, 5, { ...ada, tool: 'long_computation', arguments: { seconds: 600 } }, 3);
  await store.claim(id(5), 'worker', NOW - 3 * MINUTE + 1_000);
  await store.heartbeat(id(5), 'worker', NOW - 2 * MINUTE, { statusMessage: 'Computed 140 of 600 s' });
  await seed(store, 1, { ...ada, tool: 'approval_gate', arguments: { action: 'deploy web@1.4.2 to production' } }, 12, {
    status: 'input_required',
    inputRequests: { approval: approval('Approve: deploy web@1.4.2 to production?') },
    statusMessage: "Waiting for a person to answer on the task's page",
  });
  await seed(store, 2, { ...ada, tool: 'intake_form', arguments: { project: 'apollo' } }, 40, {
    status: 'input_required',
    inputRequests: {
      contact: {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: 'Who is the contact for apollo?',
          requestedSchema: {
            type: 'object',
            properties: {
              name: { type: 'string', title: 'Your name', minLength: 1, maxLength: 80 },
              email: { type: 'string', title: 'Email', format: 'email', description: 'Where the summary is sent' },
            },
            required: ['name', 'email'],
          },
        },
      },
    },
    statusMessage: 'Waiting for answers',
  });
  await seed(store, 3, { ...ada, tool: 'batch_process', arguments: { items: ['north', 'south', 'east'] } }, 180, {
    status: 'completed',
    result: {
      content: [{ type: 'text', text: 'Processed 3 items: 3 succeeded, 0 failed.' }],
      structuredContent: {
        processed: 3,
        results: [
          { item: 'north', outcome: 'ok', records: 1200 },
          { item: 'south', outcome: 'ok', records: 860 },
          { item: 'east', outcome: 'ok', records: 1435 },
        ],
      },
    },
  });
  await seed(
    store,
    4,
    { ...ada, tool: 'approval_gate', arguments: { action: 'drop the staging table' } },
    5 * 60,
    {
      status: 'completed',
      result: {
        content: [{ type: 'text', text: 'Not approved by Eve: drop the staging table. Reason: not during the release freeze' }],
        structuredContent: {
          approved: false,
          action: 'drop the staging table',
          comment: 'not during the release freeze',
          decidedBy: 'Eve',
          message: 'Not approved by Eve: drop the staging table. Reason: not during the release freeze',
        },
        isError: true,
      },
    },
    {
      key: 'approval',
      content: { approve: false, comment: 'not during the release freeze' },
      by: principalFor(ISSUER, 'eve'),
      name: 'Eve',
    },
  );
  await seed(
    store,
    6,
    { owner: ALICE, requester: 'Alice Liddell', tool: 'approval_gate', arguments: { action: 'rotate the API keys' } },
    55,
    {
      status: 'input_required',
      inputRequests: { approval: approval('Approve: rotate the API keys?', true) },
    },
  );
}

/** The pictures' console on 127.0.0.1: its base URL, and how to stop it. */
export async function startScreenshotConsole(): Promise<{ base: string; close: () => Promise<void> }> {
  const store = new InMemoryTaskStore({
    retentionMs: 86_400_000,
    sweepGraceMs: 60_000,
    leaseMs: 600_000,
    stepRetentionMs: 86_400_000,
    maxInputWaitMs: 7 * 86_400_000,
    listing: {},
    approvals: true,
  });
  await seedAll(store);
  const secret = randomBytes(32);
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const app = createConsoleApp({
    actions: new TaskActions({ store, queue: new InMemoryTaskQueue(), log: () => {}, now: () => NOW }),
    mode: { kind: 'sign-in', issuer: ISSUER, clientId: 'console' },
    links: new DeploymentLinks(`${base}/mcp`),
    keys: purposeKeys(async () => secret),
    signOutRecords: store,
    signInNameRecords: store,
    config: { retentionMs: 86_400_000, pollIntervalMs: 5_000, maxPollIntervalMs: 30_000, maxInputWaitMs: 7 * 86_400_000 },
    approvers: { groups: ['approvers'], scopes: [] },
    localPrincipal: 'local',
    // A stand-in sign-in: straight back to the callback, as ada, an approver.
    signIn: {
      start: async (next) => ({ url: `${base}/console/callback?code=c&state=s`, state: { state: 's', nonce: 'n', verifier: 'v', next } }),
      finish: async () => ({ principal: ADA, name: 'Ada Lovelace', claims: { groups: ['approvers'], scopes: [] } }),
    },
    log: () => {},
    now: () => NOW,
  });
  server.on('request', (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const body = chunks.length > 0 ? Buffer.concat(chunks) : undefined;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
      const response = await app.fetch(
        new Request(`${base}${req.url}`, { method: req.method ?? 'GET', headers, ...(body && req.method !== 'GET' ? { body } : {}) }),
      );
      const out: Record<string, string | string[]> = {};
      response.headers.forEach((value, name) => {
        if (name !== 'set-cookie') out[name] = value;
      });
      const cookies = response.headers.getSetCookie();
      if (cookies.length > 0) out['set-cookie'] = cookies;
      res.writeHead(response.status, out);
      res.end(Buffer.from(await response.arrayBuffer()));
    });
  });
  return {
    base,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
