/**
 * A function of the assembly running as Lambda runs it: its bundled asset,
 * loaded by the project's Node 22 (`node_modules/.bin/node`, the `node`
 * devDependency; the template says `nodejs24.x`, and the bundles target
 * node22) in a process of its own, with only the variables Lambda sets and
 * the template's `Environment.Variables` — nothing of this process's
 * environment leaks in. Deviations, each stated where it is made:
 * `AWS_ENDPOINT_URL` points the bundle's SDK at this function's recording
 * proxy, and dummy credentials stand in for the role's session.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROOT } from './assembly.ts';
import type { AwsCall } from './proxy.ts';

export const NODE_22 = join(ROOT, 'node_modules/.bin/node');
const HOST = fileURLToPath(new URL('./lambda-host.mjs', import.meta.url));

/** An invocation that failed as Lambda reports it (`errorType`, `errorMessage`). */
export class InvocationError extends Error {
  constructor(
    readonly fn: string,
    readonly errorType: string,
    readonly errorMessage: string,
  ) {
    super(`${fn} failed: ${errorType}: ${errorMessage}`);
  }
}

export interface FunctionSpec {
  /** Its role in the stack (`mcp`, `worker`, …): how calls and failures are named. */
  role: string;
  name: string;
  arn: string;
  assetDir: string;
  handler: string;
  timeoutSeconds: number;
  memorySize: number;
  logGroupName: string;
  logGroupArn: string;
  /** The template's variables, resolved. */
  environment: Record<string, string>;
  /** This function's proxy (`AWS_ENDPOINT_URL`). */
  endpoint: string;
}

export interface RunningFunction {
  readonly spec: FunctionSpec;
  /** Set when the bundle failed to load (Lambda's init error), e.g. a required variable missing. */
  readonly initError: { errorType: string; errorMessage: string } | undefined;
  invoke<T = unknown>(event: unknown): Promise<T>;
  /** What the function wrote to stdout and stderr (its log). */
  output(): string;
  stop(): Promise<void>;
}

/** An empty `HOME`: nothing of this machine's AWS configuration (`~/.aws`) reaches the functions. */
const home = mkdtempSync(join(tmpdir(), 'mcp-tasks-lambda-home-'));
process.on('exit', () => rmSync(home, { recursive: true, force: true }));

/** The environment Lambda gives the function: its reserved variables, then the template's. */
export function lambdaEnvironment(spec: FunctionSpec): Record<string, string> {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    HOME: home,
    LAMBDA_TASK_ROOT: spec.assetDir,
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs24.x',
    AWS_LAMBDA_FUNCTION_NAME: spec.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memorySize),
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: spec.logGroupName,
    AWS_LAMBDA_LOG_STREAM_NAME: logStream(),
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    // Deviation: the role's session credentials (nothing checks signatures here).
    AWS_ACCESS_KEY_ID: 'ASIALANE0000000000',
    AWS_SECRET_ACCESS_KEY: 'lane',
    AWS_SESSION_TOKEN: 'lane',
    // Deviation: every service endpoint is this function's recording proxy.
    AWS_ENDPOINT_URL: spec.endpoint,
    ...spec.environment,
  };
}

function logStream(): string {
  return `${new Date().toISOString().slice(0, 10).replaceAll('-', '/')}/[$LATEST]${randomUUID().replaceAll('-', '')}`;
}

/** Starts an execution environment and waits for its init to finish (or fail). */
export async function startFunction(spec: FunctionSpec, record: (call: AwsCall) => void): Promise<RunningFunction> {
  const env = lambdaEnvironment(spec);
  const child: ChildProcess = fork(HOST, [spec.assetDir, spec.handler, String(spec.timeoutSeconds)], {
    execPath: NODE_22,
    execArgv: [],
    env,
    cwd: spec.assetDir,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const pending = new Map<string, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let initError: { errorType: string; errorMessage: string } | undefined;
  let exited = false;

  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${spec.role} exited during init (code ${code}): ${output}`)));
    child.on('message', (message: { type: string; id?: string; result?: unknown; error?: { errorType: string; errorMessage: string } }) => {
      if (message.type === 'ready') resolve();
      else if (message.type === 'init-error') {
        initError = message.error;
        resolve();
      } else if (message.type === 'result' && message.id) {
        const waiter = pending.get(message.id);
        pending.delete(message.id);
        if (!waiter) return;
        if (message.error) waiter.reject(new InvocationError(spec.role, message.error.errorType, message.error.errorMessage));
        else waiter.resolve(message.result);
      }
    });
  });
  child.removeAllListeners('exit');
  child.once('exit', () => {
    exited = true;
    for (const waiter of pending.values())
      waiter.reject(new InvocationError(spec.role, 'Runtime.ExitError', `exited: ${output.slice(-2000)}`));
    pending.clear();
  });

  return {
    spec,
    initError,
    invoke<T>(event: unknown): Promise<T> {
      if (exited) return Promise.reject(new InvocationError(spec.role, 'Runtime.ExitError', 'the environment has exited'));
      // The Lambda service writes each invocation's log with the function's role.
      const stream = `${spec.logGroupArn.replace(/:\*$/, '')}:log-stream:${env.AWS_LAMBDA_LOG_STREAM_NAME}`;
      record({ fn: spec.role, action: 'logs:CreateLogStream', resource: stream, by: 'lambda' });
      record({ fn: spec.role, action: 'logs:PutLogEvents', resource: stream, by: 'lambda' });
      const id = randomUUID();
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        child.send({ type: 'invoke', id, event, requestId: randomUUID(), functionArn: spec.arn });
      });
    },
    output: () => output,
    stop: () =>
      new Promise<void>((resolve) => {
        if (exited || child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}
