/**
 * A task's status message, as every surface shows it (`tasks/get` of both
 * eras, the fallback's texts, the console, the CLI through the wire): one
 * rule, read through {@link statusMessageOf}.
 */
import { isTerminal, type TaskRecord } from './model.ts';

/**
 * The status message of `task`. While it runs or waits: the last one
 * written. Once it has ended: the message written with the end (a tool's
 * final one, a failure's or a cancel's reason; `finalMessage`), else the
 * default of its status: never a message written before the end ("Approved;
 * carrying out …", "Waiting for a person …"), which no longer holds. Rows
 * ended before `finalMessage` existed read the default too.
 */
export function statusMessageOf(task: TaskRecord): string | undefined {
  if (!isTerminal(task.status)) return task.statusMessage;
  const final = finalMessageOf(task);
  if (final !== undefined) return final;
  switch (task.status) {
    case 'completed':
      return task.result['isError'] === true ? 'Completed with a tool error' : 'Completed';
    case 'failed':
      return `Failed: ${task.error.message}`;
    default:
      return 'Cancelled';
  }
}

/** The message an ended task's end wrote, if it wrote one (what {@link statusMessageOf} gives, but for a default); `undefined` before the end. */
export function finalMessageOf(task: TaskRecord): string | undefined {
  return isTerminal(task.status) && task.finalMessage === true ? task.statusMessage : undefined;
}
