import { AsyncLocalStorage } from 'node:async_hooks';
import type { LogEventName } from './log-events.ts';

/**
 * One structured log event. `event` names what happened; the other fields are
 * ids, names, counts and outcomes: never tool arguments, answers or tokens.
 */
export interface LogEvent {
  /** What happened: a name of the table of log events. */
  event: LogEventName;
  [field: string]: unknown;
}

/** Where the code logs: the one sink, injected by each composition root. */
export type Log = (event: LogEvent) => void;

/** Ids carried by every line logged while handling one request or message (request id, task id). */
const context = new AsyncLocalStorage<Record<string, unknown>>();

/**
 * Runs `fn` with `fields` added to every line logged inside it, however deep
 * (an `AsyncLocalStorage` scope, so concurrent records of one batch keep their
 * own task ids). Nested scopes add to the outer one.
 */
export function withLogContext<T>(fields: Record<string, unknown>, fn: () => T): T {
  const defined = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
  return context.run({ ...context.getStore(), ...defined }, fn);
}

/**
 * The log sink: each event as one JSON line, with the time and the ids of the
 * current {@link withLogContext} scope. Written to stdout by default, with no
 * prefix (`console.log` in Lambda would add a timestamp, request id and level
 * before the JSON), so CloudWatch metric filters and Logs Insights can address
 * its fields directly. `write` lets the local stack and tests collect lines.
 */
export function jsonLog(write: (line: string) => void = (line) => void process.stdout.write(line)): Log {
  return (event) => write(`${JSON.stringify({ time: new Date().toISOString(), ...context.getStore(), ...event })}\n`);
}

/** The name of what was thrown, for a log line: never its message, which may quote arguments or answers. */
export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}
