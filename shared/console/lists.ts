/**
 * The rows of the console's lists, as nodes (`nodes.ts`): the first page
 * and its live refresh draw them with the same functions. A person's tasks
 * (status in words, title, a line that tells runs of one tool apart, when it
 * started, the latest message) and the questions waiting for an approver;
 * the list's filters (waiting for me, running, ended, and a text filter on
 * the title, tool and summary).
 */
import { taskPagePath } from '../links.ts';
import type { WaitingQuestion } from '../tasks/approvals-model.ts';
import { isTerminal, type TaskRecord } from '../tasks/model.ts';
import { el, type UiNode } from './nodes.ts';
import { decidableKeys, labelOf, latestLine, statusBadge, timeNode, titleOf, type Viewer } from './words.ts';

/** Which tasks a list shows. */
const SHOWS = ['all', 'waiting', 'running', 'ended'] as const;
export type Show = (typeof SHOWS)[number];

/** The list's filters, as a request gives them (anything else is `all` and no text). */
export interface ListFilter {
  show: Show;
  text: string;
}

/** The filter of a request's `show` and `q`. */
export function listFilter(show: string | undefined, text: string | undefined): ListFilter {
  return { show: (SHOWS as readonly string[]).includes(show ?? '') ? (show as Show) : 'all', text: (text ?? '').trim().slice(0, 200) };
}

/** Most characters of a task's summary line. */
const SUMMARY_CHARS = 90;

/** A short line of a task's arguments, telling runs of one tool apart: `Action: deploy web · Four eyes: Yes`. */
export function argumentSummary(args: Record<string, unknown>): string {
  const parts = Object.entries(args).map(([key, value]) => `${labelOf(key)}: ${short(value)}`);
  const line = parts.join(' · ');
  return line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line;
}

function short(value: unknown): string {
  if (typeof value === 'string') return value.replace(/\s+/g, ' ');
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return `${value.length} item${value.length === 1 ? '' : 's'}`;
  return value === null || value === undefined ? 'none' : '…';
}

/** Whether `task` passes `filter` for `viewer`. */
export function shown(task: TaskRecord, filter: ListFilter, viewer: Viewer): boolean {
  const kind =
    filter.show === 'all' ||
    (filter.show === 'waiting' && decidableKeys(task, viewer).length > 0) ||
    (filter.show === 'running' && !isTerminal(task.status) && decidableKeys(task, viewer).length === 0) ||
    (filter.show === 'ended' && isTerminal(task.status));
  if (!kind || filter.text === '') return kind;
  const haystack = `${titleOf(task)} ${task.tool} ${argumentSummary(task.arguments)}`.toLowerCase();
  return haystack.includes(filter.text.toLowerCase());
}

/** The rows of a person's tasks. */
export function taskRows(tasks: readonly TaskRecord[], viewer: Viewer, now: number): UiNode[] {
  return tasks.map((task) =>
    el(
      'tr',
      { 'data-task': task.taskId },
      el('td', { 'data-label': 'Status' }, statusBadge(task, viewer)),
      el(
        'td',
        { 'data-label': 'Task' },
        el('a', { href: taskPagePath(task.taskId) }, titleOf(task)),
        el('small', { class: 'summary' }, argumentSummary(task.arguments)),
      ),
      el('td', { 'data-label': 'Started' }, timeNode(task.createdAt, now)),
      el('td', { 'data-label': 'Latest' }, latestLine(task) ?? ''),
    ),
  );
}

/** The rows of the questions waiting for an approver (an approver's own four-eyes questions are marked as not theirs). */
export function waitingRows(questions: readonly WaitingQuestion[], viewer: Viewer, now: number): UiNode[] {
  return questions.map(({ task, key }) => {
    const request = task.status === 'input_required' ? task.inputRequests[key] : undefined;
    const message = request?.params?.['message'];
    const theirs = request !== undefined && decidableKeys(task, viewer).includes(key);
    return el(
      'tr',
      { 'data-waiting': `${task.taskId}:${key}` },
      el(
        'td',
        { 'data-label': 'Task' },
        el('a', { href: taskPagePath(task.taskId) }, titleOf(task)),
        el('small', { class: 'summary' }, typeof message === 'string' ? message : key),
      ),
      el('td', { 'data-label': 'For' }, theirs ? el('span', { class: 'badge badge-waiting' }, 'Waiting for you') : 'Another approver'),
      el('td', { 'data-label': 'Decide by' }, task.sweepAt === undefined ? 'no deadline' : timeNode(task.sweepAt, now)),
      el('td', { 'data-label': 'Waiting since' }, timeNode(task.lastUpdatedAt, now)),
    );
  });
}
