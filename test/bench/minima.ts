/** The bench's baseline: the minimum AWS usage the design needs, per scenario. */
import { ENTER, type Figures, LEAVE, MOVE } from './aws-counting.ts';

/** Units of one row write (rows stay under 1 KB) and of one strongly consistent read of it (under 4 KB). */
export const ROW_WCU = 1;
export const ROW_RCU = 1;
/**
 * The list index: where a console lists tasks (`npm start`'s open console does, as a deployment whose
 * console signs people in), the create's put writes the task's list keys: one index write, and no
 * later write touches them. A deployment whose console lists nothing writes none.
 */
export const LISTED = 1;
/**
 * Simple task. DynamoDB: create (put) + claim (lease) + finish (outcome) = 3 row writes, no read; index:
 * create enters it, finish leaves it (the claim leaves `sweepAt` alone); the create lists it. SQS: send +
 * receive + delete. EventBridge: its end (`Task Completed`).
 */
export const SIMPLE_MIN: Figures = {
  ddbRequests: 3,
  rcu: 0,
  wcu: 3 * ROW_WCU + ENTER + LEAVE + LISTED,
  sqsRequests: 3,
  invocations: 1,
  events: 1,
};
/**
 * The simple task where people sign in (an issuer): the cap on unfinished tasks is on by default
 * (100 per principal), so the create first adds the task id to its principal's set of unfinished
 * tasks (one `UpdateItem`) and the end removes it (another): two writes, each as large as the set
 * (one unit while it holds fewer than about 25 ids, a unit more per 27 ids after that). The console
 * lists the task, as npm start's open one does.
 */
export const SLOT_WRITES = 2;
export const WITH_ISSUER_MIN: Figures = {
  ...SIMPLE_MIN,
  ddbRequests: SIMPLE_MIN.ddbRequests + SLOT_WRITES,
  wcu: SIMPLE_MIN.wcu + SLOT_WRITES * ROW_WCU,
};
/**
 * One input round: the simple task's run twice, plus the answer. DynamoDB: create + claim + suspend
 * (finish `input_required`) + answer (read the outstanding keys, then one conditional write) + second
 * claim + finish = 6 writes, 1 read; index: enter (create), move (suspend: `sweepAt` becomes the wait's
 * deadline, `TASKS_MAX_INPUT_WAIT_MS`), move (answer resumes), leave (finish); neither claim moves it.
 * The deadline costs the round two index writes (it was leave + enter before waits could end). SQS:
 * send/receive/delete for each run (the answer enqueues the second). EventBridge: its end only (the
 * question is the client's to answer, not a person's: no `Task Waiting For Person`).
 */
export const INPUT_ROUND_MIN: Figures = {
  ddbRequests: 7,
  rcu: 1 * ROW_RCU,
  wcu: 6 * ROW_WCU + ENTER + MOVE + MOVE + LEAVE + LISTED,
  sqsRequests: 6,
  invocations: 2,
  events: 1,
};
/**
 * A question for a person (`approval_gate`), approvers named, decided through `tasks/update` by its
 * owner: the input round, plus the tool's one progress write (`Approved; carrying out…`), plus the
 * approvers' list entry of the question: a `PutItem` after the suspend and an `UpdateItem` removing its list keys after the
 * answer, one unit each, entering and leaving the list index (the two writes a question for a person
 * adds). Its row passes 1 KB once it waits (the question's schema, the page's link in
 * `statusMessage`): from the suspend on each row write costs 2 units. EventBridge: its
 * `Task Waiting For Person` and its end.
 */
const PERSON_ROW_WCU = 2;
export const PERSON_QUESTION_MIN: Figures = {
  ...INPUT_ROUND_MIN,
  ddbRequests: INPUT_ROUND_MIN.ddbRequests + 1 + 2,
  wcu: ROW_WCU + ROW_WCU + 5 * PERSON_ROW_WCU + ENTER + MOVE + MOVE + LEAVE + LISTED + 2 * ROW_WCU + ENTER + LEAVE,
  events: INPUT_ROUND_MIN.events + 1,
};
/**
 * A 10-step job in one invocation: the simple task plus one query of the step checkpoints (a replay
 * must see them) and one checkpoint item per step; checkpoints are not in the index. Progress writes
 * are optional (throttled heartbeats), so the minimum has none; one that is made costs its row write
 * only, since it renews no lease this early in the run (the index is keys-only and `sweepAt` stays).
 */
export const STEPS = 10;
export const TEN_STEP_MIN: Figures = {
  ddbRequests: 3 + 1 + STEPS,
  rcu: 1 * ROW_RCU,
  wcu: (3 + STEPS) * ROW_WCU + ENTER + LEAVE + LISTED,
  sqsRequests: 3,
  invocations: 1,
  events: 1,
};
/** `tasks/get`: one strongly consistent read of the row. */
export const GET_MIN = { ddbRequests: 1, rcu: ROW_RCU };
/**
 * A call from a client without tasks that ends within the synchronous budget (the fallback): the
 * simple task, plus the repeat check (this window's head read, then, absent, the previous window's:
 * the create's own conditional put is the head) and the request's wait on the row: one strongly
 * consistent read a second, so one for a task that ends within the first second.
 */
export const FALLBACK_CALL_MIN: Figures = {
  ...SIMPLE_MIN,
  ddbRequests: SIMPLE_MIN.ddbRequests + 3,
  rcu: SIMPLE_MIN.rcu + 3 * ROW_RCU,
};
/**
 * The same call again once its task ended (run 1 of the window): the head read (ended, so the
 * previous window is not read), the create under run 1's id, the request's wait; at the run's end
 * the head counts it (one write, no index change): what any later run costs, whatever the runs before.
 */
export const LATER_RUN_MIN: Figures = {
  ...SIMPLE_MIN,
  ddbRequests: SIMPLE_MIN.ddbRequests + 2 + 1,
  rcu: SIMPLE_MIN.rcu + 2 * ROW_RCU,
  wcu: SIMPLE_MIN.wcu + ROW_WCU,
};
/**
 * A repeat of an unfinished identical call from a client without tasks: the head read, which is
 * the unfinished task; nothing written, queued or run.
 */
export const REPEAT_JOIN_MIN: Figures = { rcu: ROW_RCU, wcu: 0, ddbRequests: 1, sqsRequests: 0, invocations: 0, events: 0 };
/**
 * A repeat of a later run: the head read (ended, counting the runs before), the create's
 * conditional put refused by the run (a refused put is billed as a write) and the run read.
 */
export const LATER_REPEAT_MIN: Figures = { rcu: 2 * ROW_RCU, wcu: 1, ddbRequests: 3, sqsRequests: 0, invocations: 0, events: 0 };
/** `task_status` without `waitSeconds`: one strongly consistent read of the row, as `tasks/get`. */
export const TASK_STATUS_MIN = GET_MIN;
