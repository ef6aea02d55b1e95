/**
 * The journal of started executions: `<dataDir>/stepfunctions/executions.jsonl`,
 * one JSON line when an execution starts and one when it ends, so a later
 * life of the emulator knows every name used (execution names stay taken for
 * 90 days, as in AWS) and which executions never ended.
 *
 * Each line carries `v: 1`; a later format reads these. A start is written
 * (and flushed to the operating system) before `StartExecution` answers or
 * the run begins, so a killed process never leaves a run that the journal
 * does not know. A torn last line (a kill mid-write) is skipped and logged.
 */
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { errorName, type Log } from '../../../shared/log.ts';
import type { ExecutionRecord, ExecutionStatus } from './events.ts';

/** How long a name stays taken: 90 days. Older executions are dropped from the journal at start. */
const RETENTION_MS = 90 * 24 * 3600 * 1000;

const STATUSES: ReadonlySet<string> = new Set<ExecutionStatus>(['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);

type StartLine = { v: 1; kind: 'started' } & Pick<ExecutionRecord, 'executionArn' | 'stateMachineArn' | 'name' | 'input' | 'startDate'>;
type EndLine = { v: 1; kind: 'ended' } & Pick<ExecutionRecord, 'executionArn' | 'status' | 'stopDate' | 'output' | 'error' | 'cause'>;

export class Journal {
  readonly #file: string;
  readonly #log: Log;
  /** Appends in order, one at a time, so lines never interleave. */
  #tail: Promise<void> = Promise.resolve();

  private constructor(file: string, log: Log) {
    this.#file = file;
    this.#log = log;
  }

  /**
   * Opens the journal under `dataDir` and reads what earlier lives wrote:
   * every execution of the last 90 days, ended ones with their end, the
   * others still `RUNNING`.
   */
  static async open(dataDir: string, log: Log, now = Date.now()): Promise<{ journal: Journal; records: ExecutionRecord[] }> {
    const dir = join(dataDir, 'stepfunctions');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const journal = new Journal(join(dir, 'executions.jsonl'), log);
    const { records, dropped } = await journal.#read(now);
    if (dropped) await journal.#rewrite(records);
    return { journal, records };
  }

  /** Records a start; resolves once it is written. */
  started(record: ExecutionRecord): Promise<void> {
    const { executionArn, stateMachineArn, name, input, startDate } = record;
    return this.#append({ v: 1, kind: 'started', executionArn, stateMachineArn, name, input, startDate });
  }

  /** Records an end; resolves once it is written. */
  ended(record: ExecutionRecord): Promise<void> {
    const { executionArn, status, stopDate, output, error, cause } = record;
    return this.#append(
      withoutUndefined({ v: 1 as const, kind: 'ended' as const, executionArn, status, stopDate, output, error, cause }) as EndLine,
    );
  }

  #append(line: StartLine | EndLine): Promise<void> {
    const text = `${JSON.stringify(line)}\n`;
    const written = this.#tail.then(() => appendFile(this.#file, text, { mode: 0o600 }));
    // The next line waits for this one whether it was written or not; the caller hears of a failure.
    this.#tail = written.then(
      () => undefined,
      () => undefined,
    );
    return written;
  }

  async #read(now: number): Promise<{ records: ExecutionRecord[]; dropped: boolean }> {
    let text: string;
    try {
      text = await readFile(this.#file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], dropped: false };
      throw error;
    }
    const byArn = new Map<string, ExecutionRecord>();
    let dropped = false;
    text.split('\n').forEach((raw, index) => {
      if (raw.trim() === '') return;
      const line = parseLine(raw);
      if (line === undefined) {
        this.#log({ event: 'sfn-journal-line-skipped', line: index + 1 });
        dropped = true;
      } else if (line.kind === 'started') {
        const { v: _v, kind: _kind, ...record } = line;
        byArn.set(line.executionArn, { ...record, status: 'RUNNING' });
      } else {
        const started = byArn.get(line.executionArn);
        if (started !== undefined)
          Object.assign(
            started,
            withoutUndefined({ status: line.status, stopDate: line.stopDate, output: line.output, error: line.error, cause: line.cause }),
          );
      }
    });
    const records = [...byArn.values()].filter((record) => now - record.startDate < RETENTION_MS);
    return { records, dropped: dropped || records.length < byArn.size };
  }

  /** Writes the journal anew with `records` only (whole, then renamed over the old one). */
  async #rewrite(records: ExecutionRecord[]): Promise<void> {
    const lines = records.flatMap((record) => {
      const { executionArn, stateMachineArn, name, input, startDate, status, stopDate, output, error, cause } = record;
      const start: StartLine = { v: 1, kind: 'started', executionArn, stateMachineArn, name, input, startDate };
      if (status === 'RUNNING') return [start];
      return [start, withoutUndefined({ v: 1 as const, kind: 'ended' as const, executionArn, status, stopDate, output, error, cause })];
    });
    const temporary = `${this.#file}.${process.pid}.tmp`;
    try {
      await writeFile(temporary, lines.map((line) => `${JSON.stringify(line)}\n`).join(''), { mode: 0o600 });
      await rename(temporary, this.#file);
    } catch (error) {
      this.#log({ event: 'sfn-journal-compaction-failed', error: errorName(error) });
    }
  }
}

/** A journal line of format 1, or undefined for anything else (a torn or foreign line). */
function parseLine(raw: string): StartLine | EndLine | undefined {
  let line: unknown;
  try {
    line = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof line !== 'object' || line === null) return undefined;
  const value = line as Record<string, unknown>;
  if (value['v'] !== 1 || typeof value['executionArn'] !== 'string') return undefined;
  if (value['kind'] === 'started') {
    const fields = ['stateMachineArn', 'name', 'input'].every((key) => typeof value[key] === 'string');
    return fields && typeof value['startDate'] === 'number' ? (value as StartLine) : undefined;
  }
  if (value['kind'] === 'ended' && typeof value['status'] === 'string' && STATUSES.has(value['status'])) return value as EndLine;
  return undefined;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, item]) => item !== undefined)) as T;
}
