/**
 * The DynamoDB store's operations under a run's lease, the worker's
 * (`claim`, `heartbeat`, `finish`, `release`), and `fail`, which the worker
 * and the dead-letter handler call. The writes under a lease need no read:
 * they write the fields the decision would (`decisions.ts`), under a
 * condition expression that states the decision's rule.
 */
import { randomUUID } from 'node:crypto';
import { applyOutcome, decideFail } from '../decisions.ts';
import { isTerminal, type TaskRecord } from '../model.ts';
import { releaseMoment } from '../moments.ts';
import { heartbeatFields, leaseFor, releaseFields } from '../predicates.ts';
import type { TaskStore } from '../store.ts';
import { LeaseLostError, TaskRowRejectedError } from '../store-errors.ts';
import { expiresAtSeconds } from '../ttl.ts';
import { listWaiting } from './approvals.ts';
import { fromItem, type Item, itemBytes, number, toItem } from './codec.ts';
import { countRunEnded } from './repeats.ts';
import { putChunks } from './results.ts';
import { endMinimal, rewriteRow } from './rewrite.ts';
import { INLINE_ROW_LIMIT_BYTES, RESULT_REF } from './schema.ts';
import { freeSlot } from './slots.ts';
import {
  appendMoment,
  changes,
  leaseHeldBy,
  momentWrite,
  ROW_REJECTED_ERROR,
  rejectedMessage,
  type StoreTable,
  shardsOf,
  updateRow,
} from './update.ts';

/** `claim`, `heartbeat`, `finish` and `release` on `table`. */
export function leases(table: StoreTable): Pick<TaskStore, 'claim' | 'heartbeat' | 'finish' | 'release'> {
  return {
    async claim(taskId, leaseOwner, now) {
      // A blind write of what `decideClaim` decides; its condition is the
      // `claimable` rule. No expiry check: only terminal tasks expire, and those
      // are never `working`. `sweepAt` (an index key) is left alone: create,
      // release and answer scheduled it past one lease, so the claim costs the
      // index nothing.
      const lease = leaseFor(leaseOwner, now, table.policy.leaseMs);
      // The claim's moment is appended to the row's list, as `decideClaim` appends it (never folded).
      const moment = appendMoment({ kind: 'claim', at: now });
      const item = await updateRow(table, taskId, {
        set: {
          leaseOwner: { S: lease.owner },
          leaseUntil: number(lease.until),
        },
        setExpressions: moment.setExpressions,
        increment: ['attempts'],
        condition: '#status = :working AND (attribute_not_exists(#leaseUntil) OR #leaseUntil <= :now)',
        values: { ':working': { S: 'working' }, ':now': number(now), ...moment.values },
        returnValues: 'ALL_NEW',
      });
      return item && fromItem(item);
    },

    async heartbeat(taskId, leaseOwner, now, options) {
      // A blind write of what `decideHeartbeat` decides, under the `leaseHeld` rule.
      const { renewal, progress, restart } = heartbeatFields(leaseOwner, now, options, table.policy);
      const item = await updateRow(table, taskId, {
        set: {
          // Only a renewal moves `sweepAt`, so only a renewal writes the index;
          // a progress message changes non-key attributes (keys-only index).
          // The lease stays in `leaseOwner`'s name: only its end is written.
          ...(renewal === undefined ? {} : { leaseUntil: number(renewal.lease.until), sweepAt: number(renewal.sweepAt) }),
          ...(progress === undefined
            ? {}
            : { statusMessage: { S: progress.statusMessage }, lastUpdatedAt: number(progress.lastUpdatedAt) }),
          ...(restart === undefined ? {} : { attempts: number(restart.attempts), progressMark: number(restart.progressMark) }),
        },
        // A no-op assignment, so that `UPDATED_NEW` reports `cancelRequested`
        // without sending back the whole row.
        setExpressions: ['#cancelRequested = if_not_exists(#cancelRequested, :false)'],
        ...leaseHeldBy(leaseOwner, { ':false': { BOOL: false } }),
        returnValues: 'UPDATED_NEW',
      });
      if (!item) throw new LeaseLostError(taskId);
      return { cancelRequested: item['cancelRequested']?.BOOL === true };
    },

    finish: (task, leaseOwner, outcome, now) => finish(table, task, leaseOwner, outcome, now),

    async release(taskId, leaseOwner, resumeAt, options = {}) {
      // A blind write of what `decideRelease` decides, under the `leaseHeld`
      // rule. A failed condition means the lease is not ours (any more):
      // nothing to release.
      const fields = releaseFields(resumeAt, options, table.policy);
      const moment = momentWrite(releaseMoment(options, resumeAt), options.claimed);
      await updateRow(table, taskId, {
        set: {
          sweepAt: number(fields.sweepAt),
          ...(fields.attempts === undefined ? {} : { attempts: number(fields.attempts) }),
          ...(fields.progressMark === undefined ? {} : { progressMark: number(fields.progressMark) }),
          ...moment.set,
        },
        ...(moment.setExpressions ? { setExpressions: moment.setExpressions } : {}),
        remove: ['leaseOwner', 'leaseUntil'],
        ...leaseHeldBy(leaseOwner, moment.values),
      });
    },
  };
}

/** `fail` on `table`: read, decide (`decideFail`), write the difference under the version read. */
export function failing(table: StoreTable): Pick<TaskStore, 'fail'> {
  return {
    fail: (taskId, { error, statusMessage, now, ...options }) =>
      rewriteRow(table, taskId, (task) => decideFail(task, error, statusMessage, now, table.policy, options)),
  };
}

/** `finish`: see {@link TaskStore.finish}. */
async function finish(
  table: StoreTable,
  task: TaskRecord,
  leaseOwner: string,
  outcome: Parameters<TaskStore['finish']>[2],
  now: number,
): Promise<TaskRecord> {
  // What `decideFinish` decides, computed on the record as claimed (no read):
  // the write's condition checks the `leaseHeld` rule on the row instead.
  // A record that is already terminal holds no lease, and its row is
  // terminal for good, so that condition could only fail: the outcome is
  // not applied to it (the table forbids that) and nothing is sent.
  if (isTerminal(task.status)) throw new LeaseLostError(task.taskId);
  const policy = table.policy;
  const next = applyOutcome(task, outcome, now, policy.retentionMs, policy.maxInputWaitMs);
  // Only what this outcome decides is written: `cancelRequested`, a newer
  // heartbeat `statusMessage` and the answers stay as other writers left them.
  const forced = [
    'status',
    'lastUpdatedAt',
    ...('statusMessage' in outcome && outcome.statusMessage !== undefined ? ['statusMessage'] : []),
  ];
  const write = changes(task, next, shardsOf(policy), forced);
  // A cancel requested during the run may carry a message of its own (an operator's reason): the row's wins.
  const endMessage = next.status === 'cancelled' && task.cancelMessage === undefined ? write.set['statusMessage'] : undefined;
  if (endMessage) delete write.set['statusMessage'];
  const ownMessage = endMessage ? { setExpressions: ['#statusMessage = if_not_exists(#cancelMessage, :endMessage)'] } : {};

  let chunkedResult: Record<string, unknown> | undefined;
  const text = write.set['result']?.S;
  if (next.status === 'completed' && text !== undefined && itemBytes(toItem(next, shardsOf(policy))) > INLINE_ROW_LIMIT_BYTES) {
    // The chunks go first, under an id of this call's own: a row only ever
    // names chunks that were complete before it was written, and chunks of
    // an attempt whose write below fails are never named (their TTL removes them).
    const id = randomUUID();
    const chunks = await putChunks(table, task.taskId, id, Buffer.from(text, 'utf8'), expiresAtSeconds(next.createdAt, next.ttlMs));
    delete write.set['result'];
    write.set[RESULT_REF] = { M: { id: { S: id }, chunks: number(chunks) } };
    chunkedResult = JSON.parse(text) as Record<string, unknown>;
  }

  let item: Item | undefined;
  try {
    item = await updateRow(table, task.taskId, {
      ...write,
      ...ownMessage,
      ...leaseHeldBy(leaseOwner, endMessage ? { ':endMessage': endMessage } : {}),
      returnValues: 'ALL_NEW',
    });
  } catch (error) {
    if (!(error instanceof TaskRowRejectedError)) throw error;
    // The outcome cannot be stored (e.g. a row at the size limit): the task
    // ends `failed` through a minimal write that says why.
    const message = rejectedMessage(error, 'its outcome was written');
    const ended = await endMinimal(table, task, { status: 'failed', error: ROW_REJECTED_ERROR }, message, now, leaseHeldBy(leaseOwner));
    if (!ended) throw new LeaseLostError(task.taskId);
    return ended;
  }
  if (!item) throw new LeaseLostError(task.taskId);
  const finished = fromItem(item);
  if (isTerminal(finished.status)) {
    await freeSlot(table, finished.owner, finished.taskId);
    await countRunEnded(table, finished);
  }
  await listWaiting(table, finished, now);
  return chunkedResult && finished.status === 'completed' ? { ...finished, result: chunkedResult } : finished;
}
