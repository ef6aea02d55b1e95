/**
 * The console's one script, inlined in every live page under the response's
 * CSP nonce (`bin/scripts/console-script.ts` bundles it into
 * `../live-script.ts`). On a task's page it reads the live route at the
 * task's poll interval and updates the page: status, message, the time of
 * the last change, which question forms still show, the cancel button, and
 * the result or error once the task ends. What it shows comes as text or as
 * nodes the server drew (`../nodes.ts`), built with `toDom`: no HTML is
 * parsed. A question the page does not show yet reloads the page (its form
 * is the server's to build), unless the person is typing in a form.
 */
import type { LiveView } from '../live.ts';
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

function showTask(root: HTMLElement, view: LiveView, shown: readonly string[]): boolean {
  root.dataset['status'] = view.status;
  setText('status', view.status);
  setText('status-message', view.statusMessage ?? '');
  setText('updated', view.lastUpdatedAt);
  for (const section of document.querySelectorAll<HTMLElement>('[data-question]')) {
    section.hidden = !view.questions.includes(section.dataset['question'] ?? '');
  }
  reveal('questions', view.questions.length > 0);
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
    reveal('result-error', view.result.isError);
    reveal('outcome', true);
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

const task = byId('task');
if (task?.dataset['live']) followTask(task);
