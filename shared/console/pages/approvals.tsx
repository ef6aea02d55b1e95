/**
 * What an approver sees of tasks they do not own: the list of questions for
 * a person waiting for a decision (refreshed with the page's list), and a
 * task's page narrowed to its title, status and message, who asks, and its
 * open questions for a person with their deadline. Never its arguments,
 * steps or result. The page follows the task: a question decided elsewhere
 * leaves it, saying who decided.
 */
import { raw } from 'hono/html';
import { taskPagePath } from '../../links.ts';
import { forPersonOnly, type TaskRecord } from '../../tasks/model.ts';
import type { LiveView } from '../live.ts';
import { LIVE_SCRIPT } from '../live-script.ts';
import type { UiNode } from '../nodes.ts';
import { Nodes } from './nodes.tsx';
import { DecidedBy, Question, type Refusal } from './question.tsx';
import { Timeline } from './timeline.tsx';

/** The questions waiting for an approver, oldest first. */
export function WaitingList(props: { rows: UiNode[]; next?: string }) {
  return (
    <section id="waiting">
      <h2>Waiting for an approver</h2>
      <p id="waiting-empty" hidden={props.rows.length > 0}>
        No question waits for an approver.
      </p>
      <table class="cards" hidden={props.rows.length === 0}>
        <caption class="visually-hidden">Questions waiting for an approver, oldest first</caption>
        <thead>
          <tr>
            <th scope="col">Task</th>
            <th scope="col">For</th>
            <th scope="col">Decide by</th>
            <th scope="col">Waiting since</th>
          </tr>
        </thead>
        <tbody id="waiting-rows">
          <Nodes nodes={props.rows} />
        </tbody>
      </table>
      {props.next ? (
        <p>
          <a href={`/console?waiting=${encodeURIComponent(props.next)}`}>More questions</a>
        </p>
      ) : null}
    </section>
  );
}

/** Another principal's task as an approver may see it. */
export function ApproverTaskPage(props: {
  task: TaskRecord;
  title: string;
  requester: string;
  live: LiveView;
  formToken: string;
  nonce: string | undefined;
  now: number;
  refusal?: Refusal;
}) {
  const { task, live } = props;
  const questions =
    task.status === 'input_required' ? Object.entries(task.inputRequests).filter(([, request]) => forPersonOnly(request)) : [];
  const keys = questions.map(([key]) => key);
  return (
    <div
      id="task"
      data-view="approver"
      data-live={`${taskPagePath(task.taskId)}/live?${new URLSearchParams(keys.map((key): [string, string] => ['key', key])).toString()}`}
      data-poll={String(live.pollIntervalMs)}
      data-status={task.status}
      data-questions={JSON.stringify(keys)}
    >
      <p class="crumbs">
        <a href="/console">All tasks</a>
      </p>
      <h1>{props.title}</h1>
      <p class="note">You decide this as an approver: the task is another person's, and this page shows only what is asked of you.</p>
      <p id="status-line" class="status-line" role="status">
        <Nodes nodes={live.statusNodes} />
      </p>
      <p id="live-state" class="live-state" aria-live="polite" />
      <section id="questions">
        <h2>Questions</h2>
        {questions.map(([key, request]) => (
          <Question
            task={task}
            requester={props.requester}
            questionKey={key}
            request={request}
            formToken={props.formToken}
            now={props.now}
            {...(props.refusal ? { refusal: props.refusal } : {})}
          />
        ))}
      </section>
      <DecidedBy nodes={live.decisionNodes} />
      <Timeline nodes={live.timelineNodes} />
      <script nonce={props.nonce}>{raw(LIVE_SCRIPT)}</script>
    </div>
  );
}
