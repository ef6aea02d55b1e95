/**
 * A fake GitHub REST API for the GitHub Actions wing's tests: an HTTP server
 * on 127.0.0.1 serving the calls the wing makes, each request body and each
 * response checked against GitHub's published OpenAPI description
 * (`@octokit/openapi`), every other call refused (404), and a call the
 * token's permissions do not cover refused (403, as GitHub does): the docs
 * give an App Actions read/write and Metadata read, nothing more. Runs are
 * built from the description's own examples; a test moves them along.
 */
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { Ajv } from 'ajv';

const require = createRequire(import.meta.url);
interface Spec {
  paths: Record<string, Record<string, Operation>>;
  components: Record<string, Record<string, unknown>> & { examples: Record<string, { value: unknown }> };
}
interface Operation {
  requestBody?: { content: Record<string, { schema: unknown }> };
  responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }>;
}
const SPEC = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/api.github.com.json'), 'utf8')) as Spec;

/** The permission each call needs: Actions read for a look, Actions write to act. */
type Permission = 'actions:read' | 'actions:write';
const ROUTES: readonly { method: string; pattern: RegExp; path: string; needs: Permission }[] = [
  route('POST', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches', 'actions:write'),
  route('GET', '/repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs', 'actions:read'),
  route('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}', 'actions:read'),
  route('GET', '/repos/{owner}/{repo}/actions/runs/{run_id}/jobs', 'actions:read'),
  route('POST', '/repos/{owner}/{repo}/actions/runs/{run_id}/cancel', 'actions:write'),
  route('POST', '/repos/{owner}/{repo}/actions/runs/{run_id}/force-cancel', 'actions:write'),
];

function route(method: string, path: string, needs: Permission) {
  const pattern = new RegExp(`^${path.replace(/\{[a-z_]+\}/g, '([^/]+)')}$`);
  return { method, pattern, path, needs };
}

const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema({ $id: 'github', components: SPEC.components });

/** The schema of a request body or response, with its `#/components` references resolved in the description. */
function validatorOf(schema: unknown) {
  return ajv.compile(JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"github#/components/')));
}

/** A run of the fake, as a test sees and moves it. */
export interface FakeRun {
  id: number;
  workflow: string;
  inputs: Record<string, string>;
  display_title: string;
  status: 'queued' | 'in_progress' | 'completed';
  conclusion: string | null;
  created_at: string;
  jobs: { name: string; conclusion: string | null }[];
  cancels: number;
  forceCancels: number;
}

export interface FakeGitHubOptions {
  /** The token the API accepts and its permissions (default: Actions read and write). */
  token?: string;
  permissions?: readonly Permission[];
  /** How a run's title reads from its inputs: the workflow's `run-name` (default: the `mcp_reference` input). */
  runName?: (inputs: Record<string, string>) => string;
  /** Acts as GitHub Enterprise Server before `return_run_details`: 422 naming the field. */
  refuseRunDetails?: boolean;
  /** How many reads of the runs list a new run stays out of (the list's lag). */
  listLag?: number;
}

export class FakeGitHub {
  readonly runs: FakeRun[] = [];
  /** Every call, `METHOD path` (query left out), in order. */
  readonly calls: string[] = [];
  /** Anything the fake found wrong in a request or in its own response; a test asserts it stays empty. */
  readonly violations: string[] = [];
  readonly #server: Server;
  readonly #options: FakeGitHubOptions;
  #hidden = new Map<number, number>();
  #nextId = 1000;
  url = '';

  constructor(options: FakeGitHubOptions = {}) {
    this.#options = options;
    this.#server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        this.violations.push(`fake failed: ${String(error)}`);
        res.writeHead(500).end();
      });
    });
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /** Ends run `id` with `conclusion` (jobs as given). */
  complete(id: number, conclusion: string, jobs?: FakeRun['jobs']): FakeRun {
    const run = this.runs.find((r) => r.id === id)!;
    Object.assign(run, { status: 'completed', conclusion, ...(jobs ? { jobs } : {}) });
    return run;
  }

  /** The run as the API gives it: GitHub's own example with this run's fields. */
  view(run: FakeRun): Record<string, unknown> {
    const example = structuredClone(SPEC.components.examples['workflow-run']!.value) as Record<string, unknown>;
    return {
      ...example,
      id: run.id,
      display_title: run.display_title,
      event: 'workflow_dispatch',
      status: run.status,
      conclusion: run.conclusion,
      path: `.github/workflows/${run.workflow}`,
      created_at: run.created_at,
      run_started_at: run.created_at,
      updated_at: new Date(Date.parse(run.created_at) + 600_000).toISOString(),
      html_url: `https://github.com/octo-org/octo-repo/actions/runs/${run.id}`,
      url: `${this.url}/repos/octo-org/octo-repo/actions/runs/${run.id}`,
    };
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const matched = ROUTES.map((r) => ({ r, m: r.pattern.exec(url.pathname) })).find(({ r, m }) => m && r.method === req.method);
    this.calls.push(`${req.method} ${url.pathname}`);
    if (!matched) return this.#send(res, undefined, 404, { message: 'Not Found' });
    const { r, m } = matched;
    const operation = SPEC.paths[r.path]![r.method.toLowerCase()]!;
    if (req.headers.authorization !== `Bearer ${this.#options.token ?? 'test-token'}`)
      return this.#send(res, operation, 401, { message: 'Bad credentials' });
    if (!(this.#options.permissions ?? ['actions:read', 'actions:write']).includes(r.needs))
      return this.#send(res, operation, 403, { message: 'Resource not accessible by integration' });
    const body = await bodyOf(req);
    if (operation.requestBody)
      this.#check(`${r.method} ${r.path} request`, operation.requestBody.content['application/json']!.schema, body);
    const [answer, status] = this.#answer(r.path, m!.slice(1), url.searchParams, body as Record<string, unknown>);
    this.#send(res, operation, status, answer);
  }

  #answer(path: string, params: string[], query: URLSearchParams, body: Record<string, unknown>): [unknown, number] {
    const runOf = (id: string) => this.runs.find((run) => run.id === Number(id));
    switch (path.split('/').slice(-1)[0]) {
      case 'dispatches':
        return this.#dispatch(decodeURIComponent(params[2]!), body);
      case 'runs':
        return [this.#list(decodeURIComponent(params[2]!), query), 200];
      case '{run_id}': {
        const run = runOf(params[2]!);
        return run ? [this.view(run), 200] : [{ message: 'Not Found' }, 404];
      }
      case 'jobs': {
        const jobs = (runOf(params[2]!)?.jobs ?? []).map((job, i) => this.#job(params[2]!, job, i));
        return [{ total_count: jobs.length, jobs }, 200];
      }
      default:
        return this.#cancel(runOf(params[2]!), path.endsWith('force-cancel'));
    }
  }

  #dispatch(workflow: string, body: Record<string, unknown>): [unknown, number] {
    if (this.#options.refuseRunDetails && 'return_run_details' in body)
      return [{ message: 'Invalid request.\n\n"return_run_details" is not a permitted key.' }, 422];
    const inputs = (body.inputs ?? {}) as Record<string, string>;
    const title = this.#options.runName ? this.#options.runName(inputs) : (inputs.mcp_reference ?? workflow);
    const run: FakeRun = {
      id: this.#nextId++,
      workflow,
      inputs,
      display_title: title,
      status: 'queued',
      conclusion: null,
      created_at: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
      jobs: [{ name: 'build', conclusion: null }],
      cancels: 0,
      forceCancels: 0,
    };
    this.runs.push(run);
    this.#hidden.set(run.id, this.#options.listLag ?? 0);
    if (body.return_run_details !== true) return [undefined, 204];
    const view = this.view(run);
    return [{ workflow_run_id: run.id, run_url: view.url, html_url: view.html_url }, 200];
  }

  #list(workflow: string, query: URLSearchParams): unknown {
    const since = Date.parse((query.get('created') ?? '>=1970-01-01T00:00:00Z').slice(2));
    const visible = this.runs.filter((run) => {
      const lag = this.#hidden.get(run.id) ?? 0;
      if (lag > 0) this.#hidden.set(run.id, lag - 1);
      return lag === 0 && run.workflow === workflow && Date.parse(run.created_at) >= since;
    });
    const perPage = Number(query.get('per_page') ?? 30);
    const page = Number(query.get('page') ?? 1);
    const newest = visible.reverse().slice((page - 1) * perPage, page * perPage);
    return { total_count: visible.length, workflow_runs: newest.map((run) => this.view(run)) };
  }

  #job(runId: string, job: FakeRun['jobs'][number], i: number): unknown {
    const example = structuredClone(SPEC.components.examples.job!.value) as Record<string, unknown>;
    // The description's example predates the job's required `created_at`: the schema is the reference, so it is added.
    const created_at = this.runs.find((run) => run.id === Number(runId))?.created_at;
    return {
      ...example,
      id: Number(runId) * 100 + i,
      run_id: Number(runId),
      name: job.name,
      conclusion: job.conclusion,
      status: 'completed',
      created_at,
    };
  }

  #cancel(run: FakeRun | undefined, force: boolean): [unknown, number] {
    if (!run) return [{ message: 'Not Found' }, 404];
    if (run.status === 'completed') return [{ message: 'Cannot cancel a workflow run that is completed.' }, 409];
    if (force) {
      run.forceCancels++;
      Object.assign(run, { status: 'completed', conclusion: 'cancelled' });
    } else run.cancels++;
    return [{}, 202];
  }

  #send(res: ServerResponse, operation: Operation | undefined, status: number, answer: unknown): void {
    const documented = operation?.responses[String(status)];
    if (operation && status < 400 && !documented) this.violations.push(`undocumented status ${status}`);
    const content = documented?.content?.['application/json'];
    if (content && answer !== undefined) this.#check(`response ${status}`, content.schema, answer);
    if (answer === undefined || status === 204) return void res.writeHead(status).end();
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(answer));
  }

  #check(what: string, schema: unknown, value: unknown): void {
    const validate = validatorOf(schema);
    if (!validate(value)) this.violations.push(`${what}: ${ajv.errorsText(validate.errors)}`);
  }
}

async function bodyOf(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text === '' ? undefined : JSON.parse(text);
}
