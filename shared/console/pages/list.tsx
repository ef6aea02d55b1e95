/** The list of a person's tasks, newest first, a page at a time; and the open endpoint's page without a list. */
import { taskPagePath } from '../../links.ts';
import type { TaskRecord } from '../../tasks/model.ts';
import { age } from '../view.ts';

/** One page of the list. */
export function TaskList(props: { tasks: TaskRecord[]; next?: string; now: number; first: boolean }) {
  const { tasks, now } = props;
  return (
    <>
      <h1>Your tasks</h1>
      {tasks.length === 0 ? (
        <p>{props.first ? 'No tasks yet: tasks an MCP client starts show here.' : 'No older tasks.'}</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>status</th>
              <th>tool</th>
              <th>age</th>
              <th>latest message</th>
            </tr>
          </thead>
          <tbody>
            {tasks.map((task) => (
              <tr data-task={task.taskId}>
                <td>
                  <span class="status">{task.status}</span>
                  {task.status === 'input_required' ? (
                    <>
                      {' '}
                      <span class="waiting">waiting for you</span>
                    </>
                  ) : null}
                </td>
                <td>
                  <a href={taskPagePath(task.taskId)}>{task.tool}</a>
                </td>
                <td title={new Date(task.createdAt).toISOString()}>{age(task.createdAt, now)}</td>
                <td>{task.statusMessage ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p>
        {props.first ? null : <a href="/console">Newest</a>}{' '}
        {props.next ? <a href={`/console?after=${encodeURIComponent(props.next)}`}>Older tasks</a> : null}
      </p>
    </>
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
export function Message(props: { heading: string; text: string }) {
  return (
    <>
      <h1>{props.heading}</h1>
      <p>{props.text}</p>
      <p>
        <a href="/console">Back to the console</a>
      </p>
    </>
  );
}
