/**
 * The Step Functions emulator under test with the real `@aws-sdk/client-sfn`:
 * its events and invocations collected, waits for them with generous
 * deadlines (the machine may be busy).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateStateMachineCommand, SFNClient } from '@aws-sdk/client-sfn';
import {
  type ExecutionStatusChangeEvent,
  type StepFunctionsEmulator,
  startStepFunctionsEmulator,
} from '../../bin/local/stepfunctions/index.ts';
import type { LogEvent } from '../../shared/log.ts';

/** How long a test waits for something the emulator does by itself. */
const DEADLINE_MS = 30_000;

/** One call of `invokeFunction`. */
export interface Invocation {
  functionName: string;
  payload: any;
}

export interface EmulatorUnderTest {
  emulator: StepFunctionsEmulator;
  sfn: SFNClient;
  dataDir: string;
  events: ExecutionStatusChangeEvent[];
  invocations: Invocation[];
  logs: LogEvent[];
  /** What each function does when invoked (by the name the state gives); unknown names answer `{ ok: true }`. */
  functions: Map<string, (payload: any) => Promise<unknown>>;
  /** A Standard machine of `definition`; resolves to its ARN. */
  machine(name: string, definition: object, type?: 'STANDARD' | 'EXPRESS'): Promise<string>;
  /** The event of `executionArn` reaching `status`, once it has come. */
  event(executionArn: string, status: string): Promise<ExecutionStatusChangeEvent>;
  /** The `count`-th invocation of `functionName` (1 = the first), once it has happened. */
  invocation(functionName: string, count?: number): Promise<Invocation>;
  /** Stops the emulator (as a restart of the local stack does), keeping the data directory. */
  stop(): Promise<void>;
  /** Stops the emulator and removes the data directory. */
  close(): Promise<void>;
}

export interface EmulatorUnderTestOptions {
  /** An existing data directory (a later life); default a fresh one. */
  dataDir?: string;
  waitMs?: (seconds: number, stateName: string) => number;
  onEvent?: (event: ExecutionStatusChangeEvent) => Promise<void>;
}

export async function startEmulatorUnderTest(options: EmulatorUnderTestOptions = {}): Promise<EmulatorUnderTest> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'sfn-emulator-')));
  const events: ExecutionStatusChangeEvent[] = [];
  const invocations: Invocation[] = [];
  const logs: LogEvent[] = [];
  const functions = new Map<string, (payload: any) => Promise<unknown>>();
  const changed = new EventTarget();
  const emulator = await startStepFunctionsEmulator({
    dataDir,
    log: (event) => logs.push(event),
    onEvent: async (event) => {
      events.push(event);
      changed.dispatchEvent(new Event('change'));
      await options.onEvent?.(event);
    },
    invokeFunction: async (functionName, payload) => {
      invocations.push({ functionName, payload });
      changed.dispatchEvent(new Event('change'));
      const run = functions.get(functionName);
      return run === undefined ? { ok: true } : run(payload);
    },
    ...(options.waitMs === undefined ? {} : { waitMs: options.waitMs }),
  });
  const sfn = new SFNClient({
    endpoint: emulator.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const until = waiter(changed);
  let stopped = false;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    sfn.destroy();
    await emulator.stop();
  };
  return {
    emulator,
    sfn,
    dataDir,
    events,
    invocations,
    logs,
    functions,
    machine: async (name, definition, type = 'STANDARD') => {
      const created = await sfn.send(
        new CreateStateMachineCommand({
          name,
          definition: JSON.stringify(definition),
          roleArn: 'arn:aws:iam::000000000000:role/local',
          type,
        }),
      );
      return created.stateMachineArn!;
    },
    event: (executionArn, status) =>
      until(`${status} of ${executionArn}`, () =>
        events.find((event) => event.detail.executionArn === executionArn && event.detail.status === status),
      ),
    invocation: (functionName, count = 1) =>
      until(`invocation ${count} of ${functionName}`, () => invocations.filter((call) => call.functionName === functionName)[count - 1]),
    stop,
    close: async () => {
      await stop();
      if (options.dataDir === undefined) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Waits until `find` finds something, checking at each change, for at most {@link DEADLINE_MS}. */
function waiter(changed: EventTarget) {
  return <T>(what: string, find: () => T | undefined): Promise<T> =>
    new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        clearTimeout(timer);
        changed.removeEventListener('change', check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        changed.removeEventListener('change', check);
        reject(new Error(`waited ${DEADLINE_MS} ms for ${what}`));
      }, DEADLINE_MS);
      changed.addEventListener('change', check);
      check();
    });
}

/** A task-token state asking `functionName`: the token, the execution's name and the state's input in its payload. */
export function asking(functionName: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    Type: 'Task',
    Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
    Parameters: { FunctionName: functionName, Payload: { 'token.$': '$$.Task.Token', 'taskId.$': '$$.Execution.Name', 'about.$': '$' } },
    ...extra,
  };
}

/** The error a call is refused with (the SDK's typed exception); fails when it is not refused. */
export async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the call to be refused');
}
