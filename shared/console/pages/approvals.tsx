/**
 * What an approver sees of tasks they do not own: the list of questions for
 * a person waiting for a decision, and a task's page narrowed to its tool,
 * status and message, and its open questions for a person with their
 * deadline. Never its arguments, steps or result.
 */
import { taskPagePath } from '../../links.ts';
import type { WaitingQuestion } from '../../tasks/approvals-model.ts';
import { forPersonOnly, type TaskRecord } from '../../tasks/model.ts';
import { age } from '../view.ts';
import { Question, type Refusal } from './question.tsx';

/** The questions waiting for an approver, oldest first. */
export function WaitingList(props: { questions: WaitingQuestion[]; next?: string; now: number }) {
  const { questions, now } = props;
  return (
    <section id="waiting">
      <h2>Waiting for an approver</h2>
      {questions.length === 0 ? (
        <p>No question waits for an approver.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>tool</th>
              <th>question</th>
              <th>open until</th>
              <th>waiting</th>
            </tr>
          </thead>
          <tbody>
            {questions.map(({ task, key }) => {
              const request = task.status === 'input_required' ? task.inputRequests[key] : undefined;
              const message = request?.params?.['message'];
              return (
                <tr data-waiting={`${task.taskId}:${key}`}>
                  <td>
                    <a href={taskPagePath(task.taskId)}>{task.tool}</a>
                  </td>
                  <td>{typeof message === 'string' ? message : key}</td>
                  <td>{task.sweepAt === undefined ? 'no deadline' : new Date(task.sweepAt).toISOString()}</td>
                  <td>{age(task.lastUpdatedAt, now)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {props.next ? (
        <p>
          <a href={`/console?waiting=${encodeURIComponent(props.next)}`}>More questions</a>
        </p>
      ) : null}
    </section>
  );
}

/** Another principal's task as an approver may see it. */
export function ApproverTaskPage(props: { task: TaskRecord; formToken: string; now: number; refusal?: Refusal }) {
  const { task } = props;
  const questions =
    task.status === 'input_required' ? Object.entries(task.inputRequests).filter(([, request]) => forPersonOnly(request)) : [];
  return (
    <div id="task" data-view="approver">
      <h1>{task.tool}</h1>
      <p>You decide this as an approver: the task is another principal's, and this page shows only what is asked of you.</p>
      <dl>
        <dt>Status</dt>
        <dd>
          <span id="status" class="status">
            {task.status}
          </span>{' '}
          <span id="status-message">{task.statusMessage ?? ''}</span>
        </dd>
        <dt>Task id</dt>
        <dd>{task.taskId}</dd>
      </dl>
      <section id="questions">
        <h2>Waiting for a decision</h2>
        {questions.map(([key, request]) => (
          <Question
            taskId={task.taskId}
            questionKey={key}
            request={request}
            formToken={props.formToken}
            {...(props.refusal ? { refusal: props.refusal } : {})}
            {...(task.sweepAt === undefined ? {} : { deadline: { at: task.sweepAt, now: props.now } })}
          />
        ))}
      </section>
    </div>
  );
}
