/**
 * What the page's script decides, apart from the DOM: when to read again,
 * what a live view asks of the page, what to say when a read fails. Pure,
 * so the unit tests run it as they run the server's code (`live.ts` does
 * the DOM work).
 */
import type { LiveView } from '../live.ts';

/** The statuses after which a task never changes. */
const ENDED = new Set(['completed', 'failed', 'cancelled']);

/** Whether a task of `status` is over (nothing more to read). */
export function ended(status: string | undefined): boolean {
  return status !== undefined && ENDED.has(status);
}

/** A poll interval to use: `value` when it is a positive number of milliseconds, else `fallback`. */
export function interval(value: unknown, fallback: number): number {
  const ms = Number(value);
  return Number.isFinite(ms) && ms > 0 ? ms : fallback;
}

/** What a task page does with a live view: reload for a question it does not show, or say so while the person types. */
export interface TaskStep {
  /** A question the page has no form for: reload to get it (nobody is typing). */
  reload: boolean;
  /** A question the page has no form for while the person types: show the notice instead. */
  notice: boolean;
  /** Keep reading (the task has not ended). */
  again: boolean;
}

/** The step for `view` on a page showing the forms of `shown`, `typing` when the person has typed into a form. */
export function taskStep(view: Pick<LiveView, 'status' | 'questions'>, shown: readonly string[], typing: boolean): TaskStep {
  const unseen = view.questions.some((key) => !shown.includes(key));
  return { reload: unseen && !typing, notice: unseen && typing, again: !ended(view.status) && !(unseen && !typing) };
}

/** What the page says when a read answered `status` (`undefined`: the server could not be reached). */
export function readProblem(status: number | undefined): { text: string; again: boolean } {
  if (status === 401) return { text: 'Your session ended: reload the page to sign in again.', again: false };
  if (status === 404) return { text: 'This task is gone.', again: false };
  return { text: 'Updates paused: the server could not be reached; trying again.', again: true };
}
