/**
 * A task's page: tool, arguments, status and message (kept current by the
 * live script at the task's poll interval), the open questions as forms,
 * the recorded steps, the result as the tool returned it (or the error),
 * and cancel behind a confirmation.
 */
import { raw } from 'hono/html';
import type { TaskEvent } from '../../events/task-events.ts';
import { taskPagePath } from '../../links.ts';
import { type Decision, isTerminal, needsAnotherApprover, type TaskRecord } from '../../tasks/model.ts';
import type { LiveView } from '../live.ts';
import { LIVE_SCRIPT } from '../live-script.ts';
import { jsonText } from '../view.ts';
import { TaskEvents } from './events.tsx';
import { Nodes } from './nodes.tsx';
import { Question, type Refusal } from './question.tsx';

/** Most characters of one step's value the page shows (the rest is cut, and said so). */
const STEP_SHOWN_CHARS = 20_000;

export interface TaskPageProps {
  task: TaskRecord;
  live: LiveView;
  steps: Map<string, unknown>;
  formToken: string;
  nonce: string | undefined;
  refusal?: Refusal;
  /** The time now (epoch ms), for each question's deadline. */
  now: number;
  /** Who is looking: the task's owner (a question needing another approver is not theirs to decide). */
  viewer: string;
  /** The lifecycle events the task's row implies, where the deployment publishes them. */
  events?: readonly TaskEvent[];
}

export function TaskPage(props: TaskPageProps) {
  const { task, live } = props;
  const path = taskPagePath(task.taskId);
  const questions = task.status === 'input_required' ? Object.entries(task.inputRequests) : [];
  return (
    <div
      id="task"
      data-live={`${path}/live`}
      data-poll={String(live.pollIntervalMs)}
      data-status={task.status}
      data-questions={JSON.stringify(live.questions)}
    >
      <h1>{task.tool}</h1>
      <dl>
        <dt>Status</dt>
        <dd>
          <span id="status" class="status">
            {task.status}
          </span>{' '}
          <span id="status-message">{task.statusMessage ?? ''}</span>
        </dd>
        <dt>Last change</dt>
        <dd id="updated">{live.lastUpdatedAt}</dd>
        <dt>Task id</dt>
        <dd>{task.taskId}</dd>
      </dl>
      <p id="live-state" role="status" />
      <p id="notice" hidden>
        The task asks something new. <a href={path}>Reload the page</a> to answer it.
      </p>
      <section id="questions" hidden={questions.length === 0}>
        <h2>Waiting for answers</h2>
        {questions.map(([key, request]) => (
          <Question
            taskId={task.taskId}
            questionKey={key}
            request={request}
            formToken={props.formToken}
            {...(props.refusal ? { refusal: props.refusal } : {})}
            {...(task.sweepAt === undefined ? {} : { deadline: { at: task.sweepAt, now: props.now } })}
            {...(needsAnotherApprover(request) && task.owner === props.viewer ? { blocked: FOUR_EYES_BLOCKED } : {})}
          />
        ))}
      </section>
      <Decisions decisions={task.decisions} />
      <Outcome result={live.result} />
      <section id="failure" hidden={task.status !== 'failed'}>
        <h2>Failed</h2>
        <p id="failure-message">{task.status === 'failed' ? task.error.message : ''}</p>
      </section>
      <Cancel path={path} formToken={props.formToken} hidden={isTerminal(task.status) || live.cancelRequested} />
      <p id="cancel-state">{live.cancelRequested ? 'Cancellation requested: the task stops at its next check.' : ''}</p>
      <section>
        <h2>Arguments</h2>
        <pre>{jsonText(task.arguments)}</pre>
      </section>
      <Steps steps={props.steps} />
      <TaskEvents events={props.events} />
      <script nonce={props.nonce}>{raw(LIVE_SCRIPT)}</script>
    </div>
  );
}

/** Why the task's caller sees no form for a four-eyes question. */
export const FOUR_EYES_BLOCKED =
  "This question must be decided by an approver other than the task's caller. You started this task, so you cannot decide it: an approver decides it from their console.";

/** Who decided each question for a person, and when (never what they answered). */
function Decisions(props: { decisions: Record<string, Decision> | undefined }) {
  const entries = Object.entries(props.decisions ?? {});
  if (entries.length === 0) return null;
  return (
    <section id="decisions">
      <h2>Decided by</h2>
      <ul>
        {entries.map(([key, decision]) => (
          <li data-decision={key}>
            {`"${key}": ${decision.name ?? decision.by} (${decision.as === 'approver' ? 'an approver' : "the task's caller"}, ${decision.via === 'page' ? 'on this page' : 'in their MCP client'}) at ${new Date(decision.at).toISOString()}`}
          </li>
        ))}
      </ul>
    </section>
  );
}

function Outcome(props: { result: LiveView['result'] }) {
  return (
    <section id="outcome" hidden={!props.result}>
      <h2>Result</h2>
      <p id="result-error" class="problems" hidden={!props.result?.isError}>
        The tool reported an error.
      </p>
      <div id="result" data-filled={props.result ? 'yes' : 'no'}>
        <Nodes nodes={props.result?.nodes ?? []} />
      </div>
    </section>
  );
}

function Cancel(props: { path: string; formToken: string; hidden: boolean }) {
  return (
    <section id="cancel" hidden={props.hidden}>
      <details>
        <summary>Cancel this task…</summary>
        <form method="post" action={`${props.path}/cancel`}>
          <input type="hidden" name="token" value={props.formToken} />
          <p>The tool stops at its next check; what it already did is not undone.</p>
          <button type="submit" name="confirm" value="yes">
            Yes, cancel the task
          </button>
        </form>
      </details>
    </section>
  );
}

function Steps(props: { steps: Map<string, unknown> }) {
  if (props.steps.size === 0) return null;
  return (
    <section>
      <h2>Recorded steps</h2>
      {[...props.steps].map(([name, value]) => {
        const text = jsonText(value);
        return (
          <figure>
            <figcaption>{name}</figcaption>
            <pre>
              {text.length > STEP_SHOWN_CHARS
                ? `${text.slice(0, STEP_SHOWN_CHARS)}\n… (${text.length - STEP_SHOWN_CHARS} more characters)`
                : text}
            </pre>
          </figure>
        );
      })}
    </section>
  );
}
