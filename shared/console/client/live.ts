/**
 * The console's one script, inlined in every live page under the response's
 * CSP nonce (`bin/scripts/console-script.ts` bundles it into
 * `../live-script.ts`). What it shows comes as text or as nodes the server
 * drew (`../nodes.ts`), built with `fill`: no HTML is parsed.
 *
 * - A task's page (the owner's or an approver's) reads its live route at the
 *   task's poll interval: status and message, the last change, which
 *   question forms still show, who decided, the cancel button, the result or
 *   error once the task ends. A question the page does not show yet reloads
 *   the page (its form is the server's to build), unless the person is
 *   typing; an approver's question decided elsewhere leaves the page.
 * - A list page reads its live route every 15 s while the tab is visible,
 *   and at once when it becomes visible again, replacing its rows.
 * - Every page's times say how long ago (or until), and show the absolute
 *   time in the browser's own zone on hover.
 */
import type { LiveList, LiveView } from '../live.ts';
import { relativeTime } from '../times.ts';
import { fill } from './dom.ts';
import { ended, interval, readProblem, taskStep } from './logic.ts';

const byId = (id: string) => document.getElementById(id);
const setText = (id: string, value: string) => {
  const found = byId(id);
  if (found) found.textContent = value;
};
const reveal = (id: string, shown: boolean) => {
  const found = byId(id);
  if (found) found.hidden = !shown;
};

let typing = false;
document.addEventListener('input', () => {
  typing = true;
});

/** Reads `url` as JSON; `undefined` with the HTTP status when it did not answer 200. */
async function read<T>(url: string): Promise<{ view?: T; status?: number }> {
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
    if (!response.ok) return { status: response.status };
    return { view: (await response.json()) as T, status: response.status };
  } catch {
    return {}; // the server could not be reached: said on the page, read again
  }
}

const LOCAL_TIME = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: 'numeric',
  hour: '2-digit',
  minute: '2-digit',
  timeZoneName: 'short',
});

/** Each time on the page in words from now, its absolute time (the browser's zone) on hover. */
function showTimes(): void {
  const now = Date.now();
  for (const time of document.querySelectorAll<HTMLTimeElement>('time[datetime]')) {
    const at = Date.parse(time.dateTime);
    if (Number.isNaN(at)) continue;
    time.textContent = relativeTime(at, now);
    time.title = LOCAL_TIME.format(at);
  }
}

function showTask(root: HTMLElement, view: LiveView, shown: readonly string[]): boolean {
  root.dataset['status'] = view.status;
  const line = byId('status-line');
  if (line) fill(line, view.statusNodes);
  const updated = byId('updated');
  if (updated && view.updatedNodes.length > 0) fill(updated, view.updatedNodes);
  const decisions = byId('decision-list');
  if (decisions) fill(decisions, view.decisionNodes);
  reveal('decisions', view.decisionNodes.length > 0);
  const timeline = byId('timeline-picture');
  if (timeline && view.timelineNodes) fill(timeline, view.timelineNodes);
  for (const section of document.querySelectorAll<HTMLElement>('[data-question]')) {
    section.hidden = !view.questions.includes(section.dataset['question'] ?? '');
  }
  reveal('questions', view.questions.length > 0);
  showTimes();
  if (view.over) return false;
  const step = taskStep(view, shown, typing);
  if (step.reload) {
    location.reload();
    return false;
  }
  if (step.notice) reveal('notice', true);
  reveal('cancel', !ended(view.status) && !view.cancelRequested);
  setText('cancel-state', view.cancelRequested ? 'Cancellation requested: the task stops at its next check.' : '');
  const result = byId('result');
  if (view.result && result && result.dataset['filled'] !== 'yes') {
    fill(result, view.result.nodes);
    result.dataset['filled'] = 'yes';
    setText('result-note', view.result.note ?? '');
    reveal('result-note', view.result.note !== undefined);
    reveal('outcome', true);
    showTimes();
  }
  if (view.error) {
    setText('failure-message', view.error.message);
    reveal('failure', true);
  }
  return step.again;
}

function followTask(root: HTMLElement): void {
  const shown = JSON.parse(root.dataset['questions'] ?? '[]') as string[];
  const url = root.dataset['live'] ?? '';
  const tick = async () => {
    let next = interval(root.dataset['poll'], 1000);
    const { view, status } = await read<LiveView>(url);
    if (view) {
      setText('live-state', '');
      if (!showTask(root, view, shown)) return;
      next = interval(view.pollIntervalMs, next);
    } else {
      const problem = readProblem(status);
      setText('live-state', problem.text);
      if (!problem.again) return;
    }
    setTimeout(tick, next);
  };
  if (!ended(root.dataset['status'])) setTimeout(tick, interval(root.dataset['poll'], 1000));
}

function followList(root: HTMLElement): void {
  const url = root.dataset['live'] ?? '';
  const every = interval(root.dataset['poll'], 15_000);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const refresh = async () => {
    clearTimeout(timer);
    const { view, status } = await read<LiveList>(url);
    if (view) {
      setText('live-state', '');
      for (const [id, rows] of Object.entries(view.rows)) {
        const body = byId(id);
        if (!body) continue;
        fill(body, rows);
        const table = body.closest('table');
        if (table) table.hidden = rows.length === 0;
        reveal(id === 'task-rows' ? 'list-empty' : 'waiting-empty', rows.length === 0);
      }
      showTimes();
    } else {
      const problem = readProblem(status);
      setText('live-state', problem.text);
      if (!problem.again) return;
    }
    // Only while the tab is visible: a hidden tab reads nothing until it shows again.
    if (document.visibilityState === 'visible') timer = setTimeout(refresh, every);
  };
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible') void refresh();
    else clearTimeout(timer);
  });
  if (document.visibilityState === 'visible') timer = setTimeout(refresh, every);
}

showTimes();
setInterval(showTimes, 30_000);
const task = byId('task');
if (task?.dataset['live']) followTask(task);
const list = byId('list');
if (list?.dataset['live']) followList(list);
