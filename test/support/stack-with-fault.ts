/**
 * The local stack as `npm start` runs it (its variables, its JSON log on
 * stdout, its ready line), with one fault point named by `FAULT_AT`: there the
 * process SIGKILLs itself, as a crash stops it, after printing a
 * `fault-point` line. Through the stack's own test hooks (`decorate`,
 * `instrument`): the product has no fault points.
 *
 * - `decision-recorded`: a decision's write (an answer, or a decision on a
 *   page) has returned; its POST has no response yet and its resume is not
 *   queued.
 * - `delivering`: the worker sends a decision to the execution that waits on
 *   it (`SendTaskSuccess` / `SendTaskFailure`); the emulator never gets it.
 * - `delivered`: the emulator accepted it; the worker has not recorded so.
 *
 * Run as `startLocalStackProcess({ entry: 'test/support/stack-with-fault.ts', env: { FAULT_AT: … } })`;
 * import nothing from it (it starts a stack when loaded).
 */
import { writeSync } from 'node:fs';
import { localStackEnvironment } from '../../bin/local/environment.ts';
import { startLocalStack } from '../../bin/local/stack.ts';
import { jsonLog } from '../../shared/log.ts';
import type { TaskStore } from '../../shared/tasks/store.ts';
import type { AnswerResult } from '../../shared/tasks/store-types.ts';

/** The fault points (see above). */
type FaultPoint = 'decision-recorded' | 'delivering' | 'delivered';

const DECIDING = new Set(['answer', 'decide']);
const DELIVERING = new Set(['SendTaskSuccessCommand', 'SendTaskFailureCommand']);

function crash(at: FaultPoint): never {
  // Synchronous: the line is out before the signal.
  writeSync(1, `${JSON.stringify({ event: 'fault-point', at })}\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL sent');
}

/** The store, crashing once a write records a decision (`decision-recorded`). */
function crashingStore(store: TaskStore): TaskStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (!DECIDING.has(String(property))) return value.bind(target);
      return async (...args: unknown[]) => {
        const recorded = (await value.apply(target, args)) as AnswerResult;
        if (recorded.accepted.length > 0) crash('decision-recorded');
        return recorded;
      };
    },
  });
}

const at = process.env['FAULT_AT'];
if (at !== 'decision-recorded' && at !== 'delivering' && at !== 'delivered') throw new Error(`FAULT_AT: no such fault point: ${at}`);
const stack = await startLocalStack({
  ...localStackEnvironment(process.env),
  log: jsonLog(),
  ...(at === 'decision-recorded' ? { decorate: { store: crashingStore } } : {}),
  instrument: ({ stepFunctions }) =>
    stepFunctions?.middlewareStack.add(
      (next, context) => async (args) => {
        const delivers = DELIVERING.has(context.commandName ?? '');
        if (delivers && at === 'delivering') crash(at);
        const output = await next(args);
        if (delivers && at === 'delivered') crash(at);
        return output;
      },
      { step: 'initialize', name: 'faultPoint' },
    ),
});
process.on('SIGTERM', () => {
  stack.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
console.log(`MCP endpoint ready at ${stack.url}`);
