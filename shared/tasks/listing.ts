/**
 * How both stores order and page an owner's task list: the sort key of a
 * task in it and the page cursor, which is the sort key of a page's last
 * task. The order is the sort key's, descending: newest first, ties broken
 * by task id.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { MAX_TASK_ID_LENGTH } from './limits.ts';
import { InvalidPageError } from './store-errors.ts';
import { type ListOptions, MAX_LIST_PAGE } from './store-types.ts';

/** Digits of the creation time in a sort key: epoch milliseconds stay 13 digits until the year 2286. */
const TIME_DIGITS = 15;

/** A task's place in its owner's list: `<createdAt, zero-padded>#<task id>`. */
export function listSortKey(createdAt: number, taskId: string): string {
  return `${String(createdAt).padStart(TIME_DIGITS, '0')}#${taskId}`;
}

const CURSOR = new RegExp(`^\\d{${TIME_DIGITS}}#[^#]{1,${MAX_TASK_ID_LENGTH}}$`);

/** The options checked: a limit in range, a cursor as the stores make them. Throws {@link InvalidPageError}. */
export function checkPage(options: ListOptions): ListOptions {
  if (!Number.isSafeInteger(options.limit) || options.limit < 1 || options.limit > MAX_LIST_PAGE) {
    throw new InvalidPageError(`A page lists 1 to ${MAX_LIST_PAGE} tasks`);
  }
  if (options.after !== undefined && !CURSOR.test(options.after)) throw new InvalidPageError('Malformed page cursor');
  return options;
}
