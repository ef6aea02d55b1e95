/**
 * The list of a person's tasks, newest first, a page at a time, with its
 * filters; the page's script refreshes its rows every 15 s while the tab is
 * visible (the same rows, from `lists.ts`), and the questions waiting for an
 * approver above it for approvers.
 */
import { raw } from 'hono/html';
import type { Child } from 'hono/jsx';
import type { ListFilter, Show } from '../lists.ts';
import { LIVE_SCRIPT } from '../live-script.ts';
import type { UiNode } from '../nodes.ts';
import { Nodes } from './nodes.tsx';

/** How often a list refreshes while its tab is visible. */
export const LIST_REFRESH_MS = 15_000;

const SHOW_WORDS: Record<Show, string> = { all: 'All', waiting: 'Waiting for me', running: 'Running', ended: 'Ended' };

/** The query string of a list page (filters, cursor). */
function listQuery(filter: ListFilter, extra: Record<string, string | undefined> = {}): string {
  const params = new URLSearchParams();
  if (filter.show !== 'all') params.set('show', filter.show);
  if (filter.text !== '') params.set('q', filter.text);
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) params.set(key, value);
  const query = params.toString();
  return query === '' ? '' : `?${query}`;
}

/** The list page: optional waiting questions, the filters, a page of rows, paging; refreshed live. */
export function ListPage(props: {
  filter: ListFilter;
  after: string | undefined;
  rows: UiNode[];
  /** Rows before the filters: how many the page read. */
  read: number;
  next?: string;
  waiting?: Child;
  notice?: Child;
  nonce: string | undefined;
}) {
  const { filter, after } = props;
  return (
    <div id="list" data-live={`/console/live${listQuery(filter, { after })}`} data-poll={String(LIST_REFRESH_MS)}>
      <h1>Your tasks</h1>
      {props.notice}
      <p id="live-state" class="live-state" aria-live="polite" />
      {props.waiting}
      <Filters filter={filter} />
      <p id="list-empty" hidden={props.rows.length > 0}>
        {props.read === 0
          ? after === undefined
            ? 'No tasks yet: tasks an MCP client starts show here.'
            : 'No older tasks.'
          : 'No task on this page fits the filter.'}
      </p>
      <table class="cards" hidden={props.rows.length === 0}>
        <caption class="visually-hidden">Your tasks, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Status</th>
            <th scope="col">Task</th>
            <th scope="col">Started</th>
            <th scope="col">Latest</th>
          </tr>
        </thead>
        <tbody id="task-rows">
          <Nodes nodes={props.rows} />
        </tbody>
      </table>
      <nav class="paging" aria-label="Pages">
        {after === undefined ? null : <a href={`/console${listQuery(filter)}`}>Newest tasks</a>}{' '}
        {props.next ? <a href={`/console${listQuery(filter, { after: props.next })}`}>Older tasks</a> : null}
      </nav>
      <script nonce={props.nonce}>{raw(LIVE_SCRIPT)}</script>
    </div>
  );
}

function Filters(props: { filter: ListFilter }) {
  const { filter } = props;
  return (
    <div class="filters">
      <nav aria-label="Show">
        {(Object.keys(SHOW_WORDS) as Show[]).map((show) => (
          <a href={`/console${listQuery({ ...filter, show })}`} class="chip" aria-current={show === filter.show ? 'page' : undefined}>
            {SHOW_WORDS[show]}
          </a>
        ))}
      </nav>
      <form method="get" action="/console">
        {filter.show === 'all' ? null : <input type="hidden" name="show" value={filter.show} />}
        <label for="q">Filter by tool or summary</label>
        <input id="q" name="q" type="search" value={filter.text} maxlength={200} autocomplete="off" />
        <button type="submit">Filter</button>
      </form>
      <p class="hint">Filters apply to the tasks of this page; "Older tasks" shows the next page.</p>
    </div>
  );
}

/** An open endpoint's console without a list: a task is found by its id. */
export function ById() {
  return (
    <>
      <h1>Find a task by its id</h1>
      <p>
        This console lists no tasks: the endpoint is open, so a list would show every task to anyone. A task's page is at
        /console/tasks/&lt;task id&gt;, the link a tool result or the command line gives.
      </p>
      <form method="get" action="/console/find">
        <label>
          Task id <input name="id" required maxlength={256} autocomplete="off" />
        </label>
        <button type="submit">Open</button>
      </form>
    </>
  );
}

/** What a page shows for an unknown, expired or another person's task alike. */
export function NotFound() {
  return (
    <>
      <h1>No such task</h1>
      <p>
        No task with this id is yours to see: the id may be wrong, or the task ended and its retention ran out. <a href="/console">Back</a>
      </p>
    </>
  );
}

/** A short page for a refusal or an error: what happened and what to do. */
/** A page that says one thing (`text`: words, or nodes when it holds a time). */
export function Message(props: { heading: string; text: string | readonly UiNode[] }) {
  return (
    <>
      <h1>{props.heading}</h1>
      <p>{typeof props.text === 'string' ? props.text : <Nodes nodes={props.text} />}</p>
      <p>
        <a href="/console">Back to the console</a>
      </p>
    </>
  );
}
