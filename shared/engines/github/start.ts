/**
 * Starting a task's run exactly once. A dispatch is not idempotent (the same
 * call twice makes two runs), so the run is found by the reference its
 * title carries (`reference.ts`) wherever a dispatch may already have been made:
 *
 * 1. a run attempt that may follow an earlier one (the worker crashed, or
 *    was killed, between the dispatch and recording the run) first lists the
 *    workflow's `workflow_dispatch` runs created since the task (all pages)
 *    and takes the one with its reference: no second dispatch;
 * 2. otherwise it dispatches with `return_run_details`; a server that refuses
 *    the field (GitHub Enterprise Server before it) is asked again without
 *    it, and the run is then found by the list, looked at a few times to
 *    allow for the list's lag;
 * 3. the run found must show the reference in its title (the workflow's
 *    `run-name` line): one that does not ends the task, naming the line.
 *
 * Failure window: a crash after the dispatch and before the run is recorded
 * leaves a run the next attempt finds by step 1.
 */
import { TasksError } from '../../errors.ts';
import { type GitHubApi, GitHubApiError, type WorkflowRef, type WorkflowRun } from './api.ts';
import { titleCarries } from './reference.ts';

/** The workflow input that carries the reference, shown by the workflow's `run-name`. */
export const REFERENCE_INPUT = 'mcp_reference';
/** The YAML line the workflow needs, as the error names it. */
export const RUN_NAME_LINE = `run-name: \${{ inputs.${REFERENCE_INPUT} }}`;
/** How far back of the task's creation a run may be dated: the clocks of this server and GitHub's differ. */
export const CLOCK_SKEW_MS = 60_000;

/** What the start needs. */
export interface StartRequest {
  at: WorkflowRef;
  ref: string;
  /** The workflow's inputs from the tool's arguments (the reference is added). */
  inputs: Record<string, string>;
  reference: string;
  /** When the task was created (epoch ms): no run of it is older. */
  since: number;
  /** Whether an earlier attempt of this run may have dispatched already. */
  retry: boolean;
}

/** The run a task follows. */
export interface StartedRun {
  runId: number;
  htmlUrl: string;
  /** Whether this attempt found it rather than dispatched it. */
  found: boolean;
}

export interface StartOptions {
  /** How many times the list is read for a run dispatched without details (default 5). */
  looks?: number;
  /** The wait between two looks (default: 2 s, doubling). */
  sleep?: (attempt: number) => Promise<void>;
}

/** The run's title does not show its reference: the workflow lacks the `run-name` line. */
export class MissingRunNameError extends TasksError {
  constructor(readonly workflow: string) {
    super(`The run of ${workflow} does not show its reference in its title: add the line "${RUN_NAME_LINE}" to ${workflow}`);
    this.name = 'MissingRunNameError';
  }
}

/** No run with the reference appeared in the list after the dispatch. */
export class RunNotFoundError extends TasksError {
  constructor(readonly workflow: string) {
    super(`No run of ${workflow} shows its reference yet (does ${workflow} have the line "${RUN_NAME_LINE}"?)`);
    this.name = 'RunNotFoundError';
  }
}

/** Starts the task's run, or finds the one an earlier attempt started. */
export async function startRunOnce(api: GitHubApi, request: StartRequest, options: StartOptions = {}): Promise<StartedRun> {
  if (request.retry) {
    const earlier = await findRun(api, request);
    if (earlier) return { runId: earlier.id, htmlUrl: earlier.html_url, found: true };
  }
  const inputs = { ...request.inputs, [REFERENCE_INPUT]: request.reference };
  const dispatched = await dispatchOnce(api, request, inputs);
  if (dispatched === undefined) {
    const run = await lookFor(api, request, options);
    return { runId: run.id, htmlUrl: run.html_url, found: false };
  }
  const run = await api.run(request.at.repository, dispatched.runId);
  if (!titleCarries(run.display_title, request.reference)) throw new MissingRunNameError(request.at.workflow);
  return { runId: run.id, htmlUrl: run.html_url, found: false };
}

/** The dispatch with `return_run_details`, or without where the server refuses the field. */
async function dispatchOnce(api: GitHubApi, request: StartRequest, inputs: Record<string, string>) {
  try {
    return await api.dispatch(request.at, request.ref, inputs, true);
  } catch (error) {
    if (!refusesRunDetails(error)) throw error;
    // Refused before any run was made: asking again without the field makes the one run.
    return await api.dispatch(request.at, request.ref, inputs, false);
  }
}

/** A server that does not know `return_run_details` refuses the body as invalid, naming the field. */
export function refusesRunDetails(error: unknown): boolean {
  return (
    error instanceof GitHubApiError && (error.status === 400 || error.status === 422) && /return_run_details/.test(error.githubMessage)
  );
}

async function findRun(api: GitHubApi, request: StartRequest): Promise<WorkflowRun | undefined> {
  const runs = await api.dispatchRunsSince(request.at, request.since - CLOCK_SKEW_MS);
  return runs.find((run) => titleCarries(run.display_title, request.reference));
}

async function lookFor(api: GitHubApi, request: StartRequest, options: StartOptions): Promise<WorkflowRun> {
  const looks = options.looks ?? 5;
  const sleep = options.sleep ?? ((attempt: number) => new Promise<void>((resolve) => setTimeout(resolve, 2_000 * 2 ** attempt)));
  for (let look = 0; look < looks; look++) {
    if (look > 0) await sleep(look - 1);
    const run = await findRun(api, request);
    if (run) return run;
  }
  throw new RunNotFoundError(request.at.workflow);
}
