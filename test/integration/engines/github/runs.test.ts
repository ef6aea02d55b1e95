import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { GitHubApi } from '../../../../shared/engines/github/api.ts';
import { cancelRun, endOfRun, pollUntilCompleted } from '../../../../shared/engines/github/follow.ts';
import { runReference } from '../../../../shared/engines/github/reference.ts';
import { MissingRunNameError, RunNotFoundError, startRunOnce } from '../../../../shared/engines/github/start.ts';
import { purposeKey } from '../../../../shared/keys.ts';
import { FakeGitHub, type FakeGitHubOptions } from '../../../support/fake-github.ts';

const KEY = purposeKey(Buffer.alloc(32, 1), 'github-run-reference');
const AT = { repository: 'octo-org/octo-repo', workflow: 'release.yml' };
const noWait = async () => {};

async function withFake(options: FakeGitHubOptions, test: (fake: FakeGitHub, api: GitHubApi) => Promise<void>): Promise<void> {
  const fake = await new FakeGitHub(options).start();
  try {
    await test(fake, new GitHubApi({ baseUrl: fake.url, token: async () => 'test-token' }));
    assert.deepEqual(fake.violations, [], 'every request and response as GitHub documents them');
  } finally {
    await fake.stop();
  }
}

function request(taskId: string, retry = false) {
  return { at: AT, ref: 'main', inputs: { version: '1.2.0' }, reference: runReference(KEY, taskId), since: Date.now(), retry };
}

describe('a GitHub workflow run against the fake GitHub API', () => {
  it('dispatches once with return_run_details, its title carrying the reference and no task id', () =>
    withFake({}, async (fake, api) => {
      const started = await startRunOnce(api, request('task-1'));
      assert.equal(fake.runs.length, 1);
      const [run] = fake.runs;
      assert.equal(started.runId, run!.id);
      assert.equal(started.found, false);
      assert.equal(run!.inputs.version, '1.2.0');
      assert.equal(run!.display_title, runReference(KEY, 'task-1'));
      assert.ok(!run!.display_title.includes('task-1'));
      assert.deepEqual(fake.calls, [
        `POST /repos/octo-org/octo-repo/actions/workflows/release.yml/dispatches`,
        `GET /repos/octo-org/octo-repo/actions/runs/${run!.id}`,
      ]);
    }));

  it('a retry after a crash between the dispatch and the record finds the run: one run, no second dispatch', () =>
    withFake({}, async (fake, api) => {
      const first = await startRunOnce(api, request('task-2'));
      // The worker died here, before recording `first`: the next attempt runs with retry set.
      const again = await startRunOnce(api, request('task-2', true));
      assert.equal(fake.runs.length, 1);
      assert.deepEqual([again.runId, again.found], [first.runId, true]);
    }));

  it('a retry that finds no run of its own dispatches, past other tasks’ runs', () =>
    withFake({}, async (fake, api) => {
      await startRunOnce(api, request('task-other'));
      const started = await startRunOnce(api, request('task-3', true));
      assert.equal(fake.runs.length, 2);
      assert.equal(started.found, false);
      assert.equal(fake.runs.find((run) => run.id === started.runId)!.display_title, runReference(KEY, 'task-3'));
    }));

  it('a server refusing return_run_details is asked again without it, and the run is found by its title despite the list’s lag', () =>
    withFake({ refuseRunDetails: true, listLag: 2 }, async (fake, api) => {
      const started = await startRunOnce(api, request('task-4'), { sleep: noWait });
      assert.equal(fake.runs.length, 1);
      assert.equal(started.runId, fake.runs[0]!.id);
      assert.equal(fake.calls.filter((call) => call.endsWith('/dispatches')).length, 2);
    }));

  it('a run whose title lacks the reference ends the start naming the run-name line', () =>
    withFake({ runName: () => 'Release' }, async (fake, api) => {
      await assert.rejects(startRunOnce(api, request('task-5')), (error: Error) => {
        assert.ok(error instanceof MissingRunNameError);
        assert.match(error.message, /run-name: \$\{\{ inputs\.mcp_reference \}\}/);
        return true;
      });
      assert.equal(fake.runs.length, 1);
    }));

  it('without return_run_details and no run-name, the looks end naming the line', () =>
    withFake({ refuseRunDetails: true, runName: () => 'Release' }, async (_fake, api) => {
      await assert.rejects(startRunOnce(api, request('task-6'), { sleep: noWait, looks: 3 }), RunNotFoundError);
    }));

  it('lists every page of runs to find its own', () =>
    withFake({}, async (fake, api) => {
      const mine = await startRunOnce(api, request('task-7'));
      for (let i = 0; i < 150; i++) await api.dispatch(AT, 'main', { mcp_reference: `other-${i}` }, false);
      const found = await startRunOnce(api, request('task-7', true));
      assert.equal(found.runId, mine.runId);
      assert.equal(fake.calls.filter((call) => call.endsWith('/runs')).length, 2);
    }));

  it('a success ends completed with its conclusion, URL, duration and jobs; a failure names its failed jobs; a cancel ends cancelled', () =>
    withFake({}, async (fake, api) => {
      const { runId } = await startRunOnce(api, request('task-8'));
      fake.complete(runId, 'success', [{ name: 'build', conclusion: 'success' }]);
      const ended = await endOfRun(api, AT.repository, await api.run(AT.repository, runId));
      assert.deepEqual(ended, {
        kind: 'completed',
        result: {
          conclusion: 'success',
          url: `https://github.com/octo-org/octo-repo/actions/runs/${runId}`,
          durationSeconds: 600,
          jobs: [{ name: 'build', conclusion: 'success' }],
        },
      });
      fake.complete(runId, 'failure', [
        { name: 'build', conclusion: 'success' },
        { name: 'deploy', conclusion: 'failure' },
      ]);
      const failed = await endOfRun(api, AT.repository, await api.run(AT.repository, runId));
      assert.equal(failed.kind, 'failed');
      assert.match(failed.kind === 'failed' ? failed.message : '', /^The run ended failure: deploy failed/);
      fake.complete(runId, 'cancelled');
      assert.deepEqual(await endOfRun(api, AT.repository, await api.run(AT.repository, runId)), { kind: 'cancelled' });
    }));

  it('a cancel: one cancel call, force-cancel after the grace period only if the run has not stopped', () =>
    withFake({}, async (fake, api) => {
      const stubborn = await startRunOnce(api, request('task-9'));
      assert.deepEqual(await cancelRun(api, AT.repository, stubborn.runId, { sleep: noWait }), { forced: true });
      const run = fake.runs[0]!;
      assert.deepEqual([run.cancels, run.forceCancels, run.conclusion], [1, 1, 'cancelled']);
      const quick = await startRunOnce(api, request('task-10'));
      const stopping = cancelRun(api, AT.repository, quick.runId, { sleep: async () => void fake.complete(quick.runId, 'cancelled') });
      assert.deepEqual(await stopping, { forced: false });
      assert.equal(fake.runs[1]!.forceCancels, 0);
    }));

  it('a cancel racing a success: the first recorded wins, the late cancel changes nothing', () =>
    withFake({}, async (fake, api) => {
      const { runId } = await startRunOnce(api, request('task-11'));
      fake.complete(runId, 'success', [{ name: 'build', conclusion: 'success' }]);
      assert.deepEqual(await cancelRun(api, AT.repository, runId, { sleep: noWait }), { forced: false });
      assert.equal(fake.runs[0]!.conclusion, 'success');
    }));

  it('locally, a run is followed by looking at it at the interval until it completes', () =>
    withFake({}, async (fake, api) => {
      const { runId } = await startRunOnce(api, request('task-12'));
      let looks = 0;
      const run = await pollUntilCompleted(api, AT.repository, runId, {
        intervalMs: 30_000,
        sleep: async (ms) => {
          assert.equal(ms, 30_000);
          if (++looks === 3) fake.complete(runId, 'success');
        },
      });
      assert.equal(run.conclusion, 'success');
      assert.equal(fake.calls.filter((call) => call === `GET /repos/octo-org/octo-repo/actions/runs/${runId}`).length, 1 + 4);
    }));

  it('a token without Actions write is refused (403) and nothing is dispatched', () =>
    withFake({ permissions: ['actions:read'] }, async (fake, api) => {
      await assert.rejects(startRunOnce(api, request('task-13')), /HTTP 403: Resource not accessible by integration/);
      assert.equal(fake.runs.length, 0);
    }));

  it('the token appears in no error', () =>
    withFake({ token: 'the-right-token' }, async (fake, api) => {
      const error = await startRunOnce(api, request('task-14')).catch((e: unknown) => e as Error);
      assert.match(String(error), /HTTP 401/);
      assert.ok(!String(error).includes('test-token'));
      assert.equal(fake.runs.length, 0);
    }));
});
