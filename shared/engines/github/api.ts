/**
 * The few GitHub REST calls a workflow run needs, over `fetch` (no SDK: a
 * worker with GitHub tools carries this file and nothing more). The base URL
 * is `GITHUB_API_URL` (GitHub, GitHub Enterprise Server's `/api/v3`, or the
 * tests' fake); the token is asked for on each call, so an App's
 * installation token can be renewed under it. Neither the token nor a
 * response body is ever put in an error's message.
 */
import { TasksError } from '../../errors.ts';

/** The API version the calls are written against. */
const API_VERSION = '2022-11-28';
/** The most a list call gives per page. */
const PER_PAGE = 100;

/** A workflow run, as the runs API and the `workflow_run` webhook give it (the fields used here). */
export interface WorkflowRun {
  id: number;
  status: string | null;
  conclusion: string | null;
  html_url: string;
  display_title: string;
  event: string;
  created_at: string;
  run_started_at?: string;
  updated_at: string;
}

/** A run's job, as the jobs call lists it. */
export interface WorkflowJob {
  name: string;
  status: string;
  conclusion: string | null;
}

/** What a dispatch gave: the run, when the server says (`return_run_details`), else nothing. */
export type Dispatched = { runId: number; htmlUrl: string } | undefined;

/** Where a workflow is: its repository (`owner/name`) and its file (`release.yml`) or id. */
export interface WorkflowRef {
  repository: string;
  workflow: string;
}

/** GitHub answered a call with an error status; `status` and GitHub's own `message` only. */
export class GitHubApiError extends TasksError {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly githubMessage: string,
  ) {
    super(`GitHub refused ${operation} (HTTP ${status}${githubMessage ? `: ${githubMessage}` : ''})`);
    this.name = 'GitHubApiError';
  }
}

export interface GitHubApiOptions {
  /** `GITHUB_API_URL`, without a trailing slash. */
  baseUrl: string;
  /** The token for the next call (a fine-grained token, or an App's installation token). */
  token: () => Promise<string>;
  fetch?: typeof fetch;
}

export class GitHubApi {
  readonly #options: GitHubApiOptions;
  readonly #fetch: typeof fetch;

  constructor(options: GitHubApiOptions) {
    this.#options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, '') };
    this.#fetch = options.fetch ?? fetch;
  }

  /**
   * Dispatches the workflow on `ref` with `inputs`. Not idempotent: each call
   * makes a run. With `returnRunDetails` the server names the run (GitHub
   * since February 2026); without, it answers 204 and the run is found by its title.
   */
  async dispatch(at: WorkflowRef, ref: string, inputs: Record<string, string>, returnRunDetails: boolean): Promise<Dispatched> {
    const body = { ref, inputs, ...(returnRunDetails ? { return_run_details: true } : {}) };
    const answer = await this.#call('POST', `${workflowPath(at)}/dispatches`, 'the dispatch', body);
    if (answer === undefined) return undefined;
    const details = answer as { workflow_run_id: number; html_url: string };
    return { runId: details.workflow_run_id, htmlUrl: details.html_url };
  }

  /** Every `workflow_dispatch` run of the workflow created at or after `since` (epoch ms), all pages, newest first. */
  async dispatchRunsSince(at: WorkflowRef, since: number): Promise<WorkflowRun[]> {
    const created = `>=${new Date(since).toISOString().replace(/\.\d{3}Z$/, 'Z')}`;
    const runs: WorkflowRun[] = [];
    for (let page = 1; ; page++) {
      const query = new URLSearchParams({ event: 'workflow_dispatch', created, per_page: String(PER_PAGE), page: String(page) });
      const answer = (await this.#call('GET', `${workflowPath(at)}/runs?${query}`, 'the list of runs')) as {
        workflow_runs: WorkflowRun[];
      };
      runs.push(...answer.workflow_runs);
      if (answer.workflow_runs.length < PER_PAGE) return runs;
    }
  }

  /** One `GET` of the run. */
  async run(repository: string, runId: number): Promise<WorkflowRun> {
    return (await this.#call('GET', `${runPath(repository, runId)}`, 'the run')) as WorkflowRun;
  }

  /** The run's jobs (its latest attempt), all pages. */
  async jobs(repository: string, runId: number): Promise<WorkflowJob[]> {
    const jobs: WorkflowJob[] = [];
    for (let page = 1; ; page++) {
      const query = new URLSearchParams({ per_page: String(PER_PAGE), page: String(page) });
      const answer = (await this.#call('GET', `${runPath(repository, runId)}/jobs?${query}`, 'the jobs')) as { jobs: WorkflowJob[] };
      jobs.push(...answer.jobs);
      if (answer.jobs.length < PER_PAGE) return jobs;
    }
  }

  /**
   * Asks the run to stop (`force` skips its `always()` steps). A run that
   * cannot be cancelled any more (it has ended: 409) is left as it is.
   */
  async cancel(repository: string, runId: number, force = false): Promise<void> {
    try {
      await this.#call('POST', `${runPath(repository, runId)}/${force ? 'force-cancel' : 'cancel'}`, 'the cancel');
    } catch (error) {
      if (error instanceof GitHubApiError && error.status === 409) return;
      throw error;
    }
  }

  async #call(method: string, path: string, operation: string, body?: unknown): Promise<unknown> {
    const response = await this.#fetch(`${this.#options.baseUrl}${path}`, {
      method,
      headers: {
        accept: 'application/vnd.github+json',
        authorization: `Bearer ${await this.#options.token()}`,
        'x-github-api-version': API_VERSION,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    if (!response.ok) throw new GitHubApiError(operation, response.status, messageOf(text));
    return text === '' ? undefined : JSON.parse(text);
  }
}

function workflowPath(at: WorkflowRef): string {
  return `/repos/${repositoryPath(at.repository)}/actions/workflows/${encodeURIComponent(at.workflow)}`;
}

function runPath(repository: string, runId: number): string {
  return `/repos/${repositoryPath(repository)}/actions/runs/${runId}`;
}

function repositoryPath(repository: string): string {
  const [owner, name] = repository.split('/');
  return `${encodeURIComponent(owner ?? '')}/${encodeURIComponent(name ?? '')}`;
}

/** GitHub's `message` field of an error body, cut short; nothing else of the body. */
function messageOf(text: string): string {
  try {
    const message = (JSON.parse(text) as { message?: unknown }).message;
    return typeof message === 'string' ? message.slice(0, 200) : '';
  } catch {
    return '';
  }
}
