/**
 * Start-up recovery of the local workflows. The emulator runs executions in
 * this process only: one started in an earlier life that never ended is lost
 * (nothing runs it any more; `lostExecutions()`). For each, a task that still
 * follows it is moved to a new execution of the same machine, with the same
 * input, started from the beginning under a name derived from the task id
 * (`<taskId>--restart-<n>`), by the task actions' restart rule
 * (`TaskActions.restartExecution`: the lost one's questions are withdrawn, a
 * decision recorded for one is delivered only if the new execution asks the
 * same again), and the lost one is stopped (its ABORTED event changes
 * nothing: the task follows the new one). Steps the lost execution ran
 * therefore run again: local workflow steps must be idempotent. A lost
 * execution of a task that ended, or that follows another, is only stopped.
 * Deployed, an execution is never lost and never restarted.
 */
import type { TaskActions } from '../../shared/actions/task-actions.ts';
import { restartedName, taskOfExecution } from '../../shared/engines/names.ts';
import type { EngineAdapter } from '../../shared/engines/port.ts';
import { executionArnOf } from '../../shared/engines/stepfunctions/index.ts';
import type { Log } from '../../shared/log.ts';
import type { LostExecution } from './stepfunctions/index.ts';

/** The error the lost execution is stopped with. */
const RESTARTED = { error: 'mcp-tasks.Restarted', cause: 'The local stack restarted; the execution was started again under a new name' };

/** Restarts the lost executions tasks still follow; resolves to how many were restarted. */
export async function restartLostExecutions(options: {
  lost: readonly LostExecution[];
  actions: Pick<TaskActions, 'restartExecution'>;
  engine: EngineAdapter;
  log: Log;
}): Promise<number> {
  const { actions, engine, log } = options;
  let restarted = 0;
  for (const lost of options.lost) {
    const { taskId, restart } = taskOfExecution(lost.name);
    const name = restartedName(taskId, restart + 1);
    const next = executionArnOf(lost.stateMachineArn, name);
    // The task moves to the new execution first: the lost one's ABORTED event below is then not followed.
    const { follows, withdrawn } = await actions.restartExecution(taskId, next, lost.executionArn);
    if (follows === next) {
      await engine.start(lost.stateMachineArn, name, lost.input);
      restarted += 1;
      log({ event: 'workflow-restarted', taskId, restart: restart + 1, withdrawn: withdrawn.length });
    }
    await engine.stop(lost.executionArn, RESTARTED);
  }
  return restarted;
}
