/**
 * What the console calls things, in words a person reads: a task's status
 * (with the badge it wears), times (relative, with the absolute time on
 * hover), keys of task data as labels, and which questions are the
 * viewer's to decide. Pure; the page's script imports the time words too,
 * so a time reads the same before and after it updates.
 */

import { parsePrincipal } from '../auth/principal.ts';
import { forPersonOnly, type InputRequest, isTerminal, needsAnotherApprover, type TaskRecord } from '../tasks/model.ts';
import { finalMessageOf, statusMessageOf } from '../tasks/status-message.ts';
import { el, type UiNode } from './nodes.ts';
import { absoluteUtc, relativeTime } from './times.ts';

/** Who is looking at a page: their principal, and whether they are an approver. */
export interface Viewer {
  principal: string;
  approver: boolean;
}

/** The badges a status wears (a class each: `badge-<name>`). */
export type Badge = 'running' | 'waiting' | 'done' | 'error' | 'rejected' | 'failed' | 'cancelled';

/**
 * The line a page shows beside a task's badge: its status message while it
 * runs or waits; once it has ended, only a message its end wrote (the badge
 * already says the default, "Done" beside "Completed" would say it twice).
 */
export function latestLine(task: TaskRecord): string | undefined {
  return isTerminal(task.status) ? finalMessageOf(task) : statusMessageOf(task);
}

/**
 * Who started the task, as its pages name them: the name or email the
 * caller's token carried (kept on the row at creation), else `signedInAs`
 * (the owner's name from their last console sign-in, `sign-in-names.ts`),
 * else the subject of their principal. Personal data: only the owner's and
 * approvers' pages show it.
 */
export function whoAsks(task: TaskRecord, signedInAs?: string): string {
  return task.requester ?? signedInAs ?? parsePrincipal(task.owner)?.subject ?? task.owner;
}

/** Whether `viewer` may decide the open question `request` of `task` on its page. */
export function canDecide(task: TaskRecord, request: InputRequest, viewer: Viewer): boolean {
  if (task.owner === viewer.principal) return !needsAnotherApprover(request);
  return viewer.approver && forPersonOnly(request);
}

/** The open questions of `task` that `viewer` may decide. */
export function decidableKeys(task: TaskRecord, viewer: Viewer): string[] {
  if (task.status !== 'input_required') return [];
  return Object.entries(task.inputRequests)
    .filter(([, request]) => canDecide(task, request, viewer))
    .map(([key]) => key);
}

/** Whether a question for a person asks for a yes or no with an optional comment: `{ approve: boolean (required), comment?: string }`. */
export function isApprovalCard(request: InputRequest): boolean {
  if (request.method !== 'elicitation/create' || (request.params?.['mode'] ?? 'form') !== 'form') return false;
  const schema = request.params?.['requestedSchema'] as { properties?: Record<string, { type?: unknown }>; required?: unknown } | undefined;
  const properties = schema?.properties ?? {};
  const names = Object.keys(properties).sort();
  const shape = names.join(',') === 'approve' || names.join(',') === 'approve,comment';
  const required = Array.isArray(schema?.required) && schema.required.includes('approve');
  return shape && required && properties['approve']?.type === 'boolean' && (properties['comment'] ?? { type: 'string' }).type === 'string';
}

/** What a decision made on a page did, as its confirmation names it (the `decided` query of the page it leads to). */
export type DecidedKind = 'approved' | 'rejected' | 'answered';

/** What an answer posted to `request` did: an approval card's yes or no (or a decline), else an answer. */
export function decidedKind(request: InputRequest, response: unknown): DecidedKind {
  const answer = response as { action?: unknown; content?: { approve?: unknown } } | undefined;
  if (!isApprovalCard(request)) return 'answered';
  return answer?.action === 'accept' && answer.content?.approve === true ? 'approved' : 'rejected';
}

/** An approver's confirmation of a decision, in words that say what it did; `undefined` for anything but a {@link DecidedKind}. */
export function decidedWords(kind: string | undefined): string | undefined {
  switch (kind) {
    case 'approved':
      return 'Approved: the task goes on and does what it asked approval for.';
    case 'rejected':
      return 'Rejected: the task ends and your reason goes to whoever started it.';
    case 'answered':
      return 'Answered: the task goes on with your answer.';
    default:
      return undefined;
  }
}

/** Whether the task ended on a "no" to one of its approval questions (its answer said `approve: false`). */
function rejected(task: TaskRecord): boolean {
  return Object.keys(task.decisions ?? {}).some((key) => {
    const answer = task.inputResponses[key] as { action?: unknown; content?: { approve?: unknown } } | undefined;
    return answer?.action === 'decline' || answer?.content?.approve === false;
  });
}

/** The status in words, with its badge, for `viewer`. */
export function statusWords(task: TaskRecord, viewer: Viewer): { words: string; badge: Badge } {
  switch (task.status) {
    case 'working':
      return { words: 'Running', badge: 'running' };
    case 'input_required': {
      const yours = decidableKeys(task, viewer).length > 0;
      const forPerson = Object.values(task.inputRequests).some(forPersonOnly);
      return { words: yours || !forPerson ? 'Waiting for your answer' : 'Waiting for an approver', badge: 'waiting' };
    }
    case 'completed':
      if (task.result['isError'] !== true) return { words: 'Done', badge: 'done' };
      return rejected(task) ? { words: 'Not approved', badge: 'rejected' } : { words: 'Ended with an error', badge: 'error' };
    case 'failed':
      return { words: 'Failed', badge: 'failed' };
    case 'cancelled':
      return { words: 'Cancelled', badge: 'cancelled' };
  }
}

/** The status as a badge node. */
export function statusBadge(task: TaskRecord, viewer: Viewer): UiNode {
  const { words, badge } = statusWords(task, viewer);
  return el('span', { class: `badge badge-${badge}`, 'data-status': task.status }, words);
}

/** A time as a node: relative words, the absolute time on hover (`datetime` for the page's script). */
export function timeNode(at: number, now: number): UiNode {
  return el('time', { datetime: new Date(at).toISOString(), title: absoluteUtc(at) }, relativeTime(at, now));
}

/** The task's title: its tool's title as kept on the row, else the tool's name as words (`approval_gate` → "Approval gate"). */
export function titleOf(task: Pick<TaskRecord, 'tool' | 'toolTitle'>): string {
  return task.toolTitle ?? labelOf(task.tool);
}

/** A key of task data as a label: `fourEyes`, `four_eyes` → "Four eyes". */
export function labelOf(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words === '' ? key : words[0]!.toUpperCase() + words.slice(1);
}
