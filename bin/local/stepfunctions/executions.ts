/**
 * Executions: started as `StartExecution` starts them (the three cases of a
 * name already used), run on the interpreter, described, stopped, listed; each
 * status change of a Standard execution journaled, then handed to `onEvent`
 * in order.
 */
import { randomUUID } from 'node:crypto';
import { errorName, type Log } from '../../../shared/log.ts';
import { ApiError } from './api-errors.ts';
import { checkName, executionArn, expressExecutionArn, type Place } from './arns.ts';
import type { Json } from './definition.ts';
import { type ExecutionRecord, type ExecutionStatusChangeEvent, statusChangeEvent } from './events.ts';
import type { Journal } from './journal.ts';
import type { Machine } from './machines.ts';
import { type Outcome, type Run, type RunDeps, startRun } from './runner.ts';

/** The largest input or output Step Functions carries: 256 KiB of UTF-8. */
const PAYLOAD_LIMIT_BYTES = 262_144;

/** An execution started in an earlier life of the data directory that never ended. */
export interface LostExecution {
  executionArn: string;
  stateMachineArn: string;
  name: string;
  input: string;
  /** Epoch milliseconds. */
  startDate: number;
}

interface Entry {
  record: ExecutionRecord;
  /** Express executions are neither journaled nor announced. */
  express: boolean;
  /** Started in an earlier life and never ended: nothing runs it. */
  lost: boolean;
  /** The journal's start line, written before anyone hears of the execution. */
  journaled: Promise<void>;
  run?: Run;
  /** The events delivered so far, in order. */
  delivered: Promise<void>;
}

export interface ExecutionsOptions {
  place: Place;
  journal: Journal;
  /** What the journal holds from earlier lives. */
  earlier: ExecutionRecord[];
  run: RunDeps;
  onEvent: (event: ExecutionStatusChangeEvent) => Promise<void>;
  log: Log;
}

export class Executions {
  readonly #options: ExecutionsOptions;
  readonly #entries = new Map<string, Entry>();
  /** Ends being journaled and announced, which a shutdown lets finish. */
  readonly #ending = new Set<Promise<void>>();
  #shutDown = false;

  constructor(options: ExecutionsOptions) {
    this.#options = options;
    for (const record of options.earlier) {
      this.#entries.set(record.executionArn, entry(record, { express: false, lost: record.status === 'RUNNING' }));
    }
  }

  /**
   * `StartExecution`. A name already used on this machine (in this life or an
   * earlier one) answers as AWS does: the original's ARN and start date while
   * it is open and the input is the same; `ExecutionAlreadyExists` once it has
   * closed, or for another input. An execution left running by an earlier life
   * counts as open.
   */
  async start(machine: Machine, requestedName: string | undefined, inputText: string | undefined): Promise<ExecutionRecord> {
    if (this.#shutDown) throw new ApiError('InternalFailure', 'The emulator is stopping', 500);
    const name = checkName(requestedName ?? randomUUID(), 'execution');
    const text = inputText ?? '{}';
    const input = parsePayload(text, 'InvalidExecutionInput', 'input');
    const express = machine.type === 'EXPRESS';
    const arn = express
      ? expressExecutionArn(this.#options.place, machine.name, name, randomUUID())
      : executionArn(this.#options.place, machine.name, name);
    const existing = this.#entries.get(arn);
    if (existing !== undefined) {
      await existing.journaled;
      if (existing.record.status === 'RUNNING' && existing.record.input === text) return existing.record;
      throw new ApiError('ExecutionAlreadyExists', `Execution Already Exists: '${arn}'`);
    }
    const record: ExecutionRecord = {
      executionArn: arn,
      stateMachineArn: machine.arn,
      name,
      input: text,
      startDate: Date.now(),
      status: 'RUNNING',
    };
    const started = entry(record, { express, lost: false });
    started.journaled = express ? Promise.resolve() : this.#options.journal.started(record);
    this.#entries.set(arn, started);
    try {
      await started.journaled;
    } catch (error) {
      this.#entries.delete(arn);
      throw error;
    }
    this.#announce(started);
    this.#options.log({ event: 'sfn-execution-started', executionArn: arn });
    started.run = startRun(machine.prepared, input, identity(machine, record), this.#options.run);
    const ending = started.run.outcome
      .then((outcome) => this.#end(started, outcome))
      .catch((error: unknown) => this.#options.log({ event: 'sfn-execution-end-failed', executionArn: arn, error: errorName(error) }))
      .finally(() => this.#ending.delete(ending));
    this.#ending.add(ending);
    return record;
  }

  /** `DescribeExecution`: the record, or `ExecutionDoesNotExist`. */
  describe(arn: string): ExecutionRecord {
    return this.#get(arn).record;
  }

  /**
   * `StopExecution`: a running execution (an earlier life's lost one too) ends
   * `ABORTED` with the given error and cause, journaled and announced; an
   * ended one is left as it ended.
   */
  async stop(arn: string, error: string | undefined, cause: string | undefined): Promise<ExecutionRecord> {
    if (error !== undefined && error.length > 256) throw tooLong('error', 256);
    if (cause !== undefined && cause.length > 32_768) throw tooLong('cause', 32_768);
    const stopping = this.#get(arn);
    await stopping.journaled;
    if (stopping.record.status !== 'RUNNING') return stopping.record;
    Object.assign(
      stopping.record,
      { status: 'ABORTED', stopDate: Date.now() },
      error === undefined ? {} : { error },
      cause === undefined ? {} : { cause },
    );
    stopping.lost = false;
    stopping.run?.abort();
    await this.#closed(stopping);
    return stopping.record;
  }

  /** `ListExecutions` of one machine, newest first, optionally of one status. */
  list(stateMachineArn: string, status: string | undefined): ExecutionRecord[] {
    return [...this.#entries.values()]
      .map(({ record }) => record)
      .filter((record) => record.stateMachineArn === stateMachineArn && (status === undefined || record.status === status))
      .sort((a, b) => b.startDate - a.startDate);
  }

  /** The executions an earlier life started and never ended (until stopped). */
  lost(): LostExecution[] {
    return [...this.#entries.values()]
      .filter((candidate) => candidate.lost)
      .map(({ record: { executionArn, stateMachineArn, name, input, startDate } }) => ({
        executionArn,
        stateMachineArn,
        name,
        input,
        startDate,
      }));
  }

  /**
   * Stops every run without a trace: no journal line, no event (a later life
   * finds them lost). Runs that had already ended are journaled and
   * announced first; resolves once every event is delivered.
   */
  async shutDown(): Promise<void> {
    this.#shutDown = true;
    for (const running of this.#entries.values()) running.run?.abort();
    await Promise.all(this.#ending);
    await Promise.all([...this.#entries.values()].map((each) => each.delivered));
  }

  #get(arn: string): Entry {
    const found = this.#entries.get(arn);
    if (found === undefined) throw new ApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${arn}'`);
    return found;
  }

  /** A run ended: unless stopped first (or the emulator is stopping), its end is recorded and announced. */
  async #end(ended: Entry, outcome: Outcome): Promise<void> {
    // After a shutdown began, a run's end is its abort: not an end AWS would see.
    if (this.#shutDown || ended.record.status !== 'RUNNING') return;
    Object.assign(ended.record, endOf(outcome), { stopDate: Date.now() });
    await this.#closed(ended);
  }

  async #closed(closed: Entry): Promise<void> {
    const { record } = closed;
    this.#options.log({ event: 'sfn-execution-ended', executionArn: record.executionArn, status: record.status, error: record.error });
    if (closed.express) return;
    try {
      await this.#options.journal.ended(record);
    } catch (error) {
      this.#options.log({ event: 'sfn-journal-write-failed', executionArn: record.executionArn, error: errorName(error) });
    }
    this.#announce(closed);
  }

  /** Hands the event of the current status to `onEvent`, after the ones before it; a rejection is logged, not retried. */
  #announce(changed: Entry): void {
    if (changed.express) return;
    const event = statusChangeEvent(changed.record, this.#options.place);
    changed.delivered = changed.delivered.then(async () => {
      try {
        await this.#options.onEvent(event);
      } catch (error) {
        this.#options.log({
          event: 'sfn-event-failed',
          executionArn: event.detail.executionArn,
          status: event.detail.status,
          error: errorName(error),
        });
      }
    });
  }
}

function entry(record: ExecutionRecord, flags: { express: boolean; lost: boolean }): Entry {
  return { record, ...flags, journaled: Promise.resolve(), delivered: Promise.resolve() };
}

function identity(machine: Machine, record: ExecutionRecord) {
  return {
    executionArn: record.executionArn,
    name: record.name,
    stateMachineArn: machine.arn,
    stateMachineName: machine.name,
    roleArn: machine.roleArn,
    startDate: record.startDate,
  };
}

/** A run's outcome as the record's end: its output as JSON text (over 256 KiB it fails, as in AWS), or its error. */
function endOf(outcome: Outcome): Pick<ExecutionRecord, 'status' | 'output' | 'error' | 'cause'> {
  if (outcome.status !== 'SUCCEEDED') return outcome;
  const output = JSON.stringify(outcome.output) ?? 'null';
  if (Buffer.byteLength(output, 'utf8') <= PAYLOAD_LIMIT_BYTES) return { status: 'SUCCEEDED', output };
  return {
    status: 'FAILED',
    error: 'States.DataLimitExceeded',
    cause: 'The state/task returned a result with a size exceeding the maximum number of bytes service limit.',
  };
}

/** Parses an input or output given to the API: JSON of at most 256 KiB, or the error AWS answers. */
export function parsePayload(text: string, invalid: 'InvalidExecutionInput' | 'InvalidOutput', member: string): Json {
  if (Buffer.byteLength(text, 'utf8') > PAYLOAD_LIMIT_BYTES) throw tooLong(member, PAYLOAD_LIMIT_BYTES);
  try {
    return JSON.parse(text) as Json;
  } catch {
    throw new ApiError(
      invalid,
      `Invalid ${member === 'input' ? 'State Machine Execution Input' : 'Output'}: 'the ${member} is not valid JSON'`,
    );
  }
}

function tooLong(member: string, limit: number): ApiError {
  return new ApiError(
    'ValidationException',
    `1 validation error detected: Value at '${member}' failed to satisfy constraint: Member must have length less than or equal to ${limit}`,
  );
}
