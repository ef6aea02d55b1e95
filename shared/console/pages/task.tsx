/**
 * A task's page: its title, status in words and message (kept current by
 * the page's script at the task's poll interval), the open questions as
 * forms (a yes-or-no approval as a card), who decided, the result or the
 * error, cancel behind a confirmation, and what it was asked to do and the
 * steps it recorded, drawn for a person with the JSON behind "Raw".
 */
import { raw } from 'hono/html';
import type { TaskEvent } from '../../events/task-events.ts';
import { taskPagePath } from '../../links.ts';
import { isTerminal, type TaskRecord } from '../../tasks/model.ts';
import type { ExecutionLink } from '../execution-link.ts';
import type { LiveView } from '../live.ts';
import { LIVE_SCRIPT } from '../live-script.ts';
import { el } from '../nodes.ts';
import { withRaw } from '../values.ts';
import { canDecide, timeNode, type Viewer } from '../words.ts';
import { TaskEvents } from './events.tsx';
import { Nodes } from './nodes.tsx';
import { DecidedBy, Question, type Refusal } from './question.tsx';
import { Timeline } from './timeline.tsx';

export interface TaskPageProps {
  task: TaskRecord;
  /** The tool's title (its name when it has none). */
  title: string;
  /** Who started the task, as the page names them (personal data: the owner's and approvers' pages only). */
  requester: string;
  live: LiveView;
  steps: Map<string, unknown>;
  formToken: string;
  nonce: string | undefined;
  refusal?: Refusal;
  /** The time now (epoch ms), for relative times and each question's deadline. */
  now: number;
  /** Who is looking: the task's owner (a question needing another approver is not theirs to decide). */
  viewer: Viewer;
  /** The lifecycle events the task's row implies, where the deployment publishes them. */
  events?: readonly TaskEvent[];
  /** A workflow tool's execution (the owner's page only): its name and its page in the AWS console. */
  execution?: ExecutionLink;
}

export function TaskPage(props: TaskPageProps) {
  const { task, live, now } = props;
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
      <p class="crumbs">
        <a href="/console">All tasks</a>
      </p>
      <h1>{props.title}</h1>
      <p id="status-line" class="status-line" role="status">
        <Nodes nodes={live.statusNodes} />
      </p>
      <Facts task={task} requester={props.requester} live={live} now={now} {...(props.execution ? { execution: props.execution } : {})} />
      <p id="live-state" class="live-state" aria-live="polite" />
      <p id="notice" hidden>
        The task asks something new. <a href={path}>Reload the page</a> to answer it.
      </p>
      <section id="questions" hidden={questions.length === 0}>
        <h2>Questions</h2>
        {questions.map(([key, request]) => (
          <Question
            task={task}
            requester={props.requester}
            questionKey={key}
            request={request}
            formToken={props.formToken}
            now={now}
            {...(props.refusal ? { refusal: props.refusal } : {})}
            {...(canDecide(task, request, props.viewer) ? {} : { blocked: FOUR_EYES_BLOCKED })}
          />
        ))}
      </section>
      <DecidedBy nodes={live.decisionNodes} />
      <Timeline nodes={live.timelineNodes} />
      <Outcome result={live.result} />
      <section id="failure" hidden={task.status !== 'failed'}>
        <h2>What went wrong</h2>
        <p id="failure-message">{task.status === 'failed' ? task.error.message : ''}</p>
      </section>
      <Cancel path={path} formToken={props.formToken} hidden={isTerminal(task.status) || live.cancelRequested} />
      <p id="cancel-state">{live.cancelRequested ? 'Cancellation requested: the task stops at its next check.' : ''}</p>
      <section id="arguments">
        <h2>What it was asked to do</h2>
        <Nodes nodes={withRaw(task.arguments)} />
      </section>
      <Steps steps={props.steps} />
      <TaskEvents events={props.events} now={now} />
      <script nonce={props.nonce}>{raw(LIVE_SCRIPT)}</script>
    </div>
  );
}

/** Why a person sees no form for a question: four eyes (the caller may not decide their own). */
export const FOUR_EYES_BLOCKED =
  "This question must be decided by an approver other than the task's caller. You started this task, so you cannot decide it: an approver decides it from their console.";

function Facts(props: { task: TaskRecord; requester: string; live: LiveView; now: number; execution?: ExecutionLink }) {
  const { task, now } = props;
  return (
    <dl class="facts">
      <dt>Started by</dt>
      <dd id="requester">{props.requester}</dd>
      <dt>Started</dt>
      <dd>
        <Nodes nodes={[timeNode(task.createdAt, now)]} />
      </dd>
      <dt>Last change</dt>
      <dd id="updated">
        <Nodes nodes={props.live.updatedNodes} />
      </dd>
      <dt>Tool</dt>
      <dd>
        <code>{task.tool}</code>
      </dd>
      <dt>Task id</dt>
      <dd>
        <code class="id">{task.taskId}</code>
      </dd>
      {props.execution ? <Execution execution={props.execution} /> : null}
    </dl>
  );
}

/** The workflow execution the task follows: a link to it in the AWS console where there is one. */
function Execution(props: { execution: ExecutionLink }) {
  const { name, url } = props.execution;
  return (
    <>
      <dt>Workflow execution</dt>
      <dd id="execution">
        {url ? (
          <a href={url} target="_blank" rel="noopener noreferrer">
            <code class="id">{name}</code> in the AWS console
          </a>
        ) : (
          <>
            <code class="id">{name}</code> (run by the local stack)
          </>
        )}
      </dd>
    </>
  );
}

function Outcome(props: { result: LiveView['result'] }) {
  return (
    <section id="outcome" hidden={!props.result}>
      <h2>Result</h2>
      <p id="result-note" class="note" hidden={!props.result?.note}>
        {props.result?.note ?? ''}
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
          <button type="submit" name="confirm" value="yes" class="danger">
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
    <section id="steps">
      <h2>Steps it recorded</h2>
      <Nodes
        nodes={[...props.steps].map(([name, value]) =>
          el('figure', { class: 'step' }, el('figcaption', undefined, name), ...withRaw(value)),
        )}
      />
    </section>
  );
}
