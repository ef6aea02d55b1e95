import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  type AlarmProps,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  Metric,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import type { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { LOG_EVENTS } from '../../shared/log-events.ts';
import { METRICS_NAMESPACE, TASK_METRICS, type TaskMetric } from '../../shared/metrics.ts';
import { MAX_DELAY_SECONDS } from '../../shared/queue/queue.ts';
import type { Api } from './api.ts';
import type { TaskFunction } from './task-function.ts';
import type { TaskQueue } from './task-queue.ts';

/** The longest delay SQS allows on one message (durable timers hop in steps of at most this). */
const MAX_SQS_DELAY = Duration.seconds(MAX_DELAY_SECONDS);

export interface OperationsProps {
  readonly api: Api;
  readonly mcp: TaskFunction;
  readonly tasks: TaskQueue;
  /** The worker: an alarm on its failed invocations, and its graphs. */
  readonly worker: TaskFunction;
  /** The sweeper: an alarm on runs that keep failing. */
  readonly sweeper: TaskFunction;
  /** How often the sweeper runs: its error alarm looks at periods at least this long. */
  readonly sweepInterval: Duration;
  /** Whether to create the dashboard ($3 a month at list price). */
  readonly dashboard: boolean;
  /**
   * An existing SNS topic that receives alarm and OK notifications; without it the alarms only change state.
   * @default none: the alarms only change state
   */
  readonly alarmTopicArn?: string;
  /**
   * The dead-letter queue of the workflow-events rule's target: alarmed when it holds a status-change event.
   * @default none: no workflow tools
   */
  readonly workflowEvents?: Queue;
}

/**
 * The failed-task alarm: the share of ended tasks that failed, over
 * {@link FAILED_RATE_PERIOD}, above this in two of three periods.
 */
export const FAILED_TASK_RATE_THRESHOLD = 0.2;
const FAILED_RATE_PERIOD = Duration.minutes(5);

/**
 * Alarms on what needs a person (six, one metric each: $0.60 a month at list
 * price), and an optional dashboard.
 *
 * Task metrics are CloudWatch embedded metrics in the functions' log lines
 * (`shared/metrics.ts`, namespace `McpTasks`): `TasksCreated`, `TasksEnded`
 * by status, `TaskFailed` (0 or 1 per ended task: its average is the failure
 * rate), `TaskDuration`, `TimeQueued`, `TaskRetries`, `TasksDeadLettered`.
 * They cost nothing while no task runs.
 * Lambda metrics cannot tell completed from failed: the worker reports task
 * outcomes, not invocation errors.
 */
export class Operations extends Construct {
  readonly alarms: Alarm[];
  readonly dashboard?: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    this.alarms = [...taskAlarms(this), ...queueAlarms(this, props), ...functionAlarms(this, props)];
    if (props.alarmTopicArn) notify(this, this.alarms, props.alarmTopicArn);
    if (props.dashboard) this.dashboard = operationsDashboard(this, props);
  }
}

/** A task metric from the functions' embedded metrics (namespace {@link METRICS_NAMESPACE}). */
function taskMetric(name: TaskMetric, statistic: string, period = Duration.minutes(5), label?: string): Metric {
  return new Metric({ namespace: METRICS_NAMESPACE, metricName: name, statistic, period, ...(label ? { label } : {}) });
}

/** Every alarm treats missing data (no traffic) as fine. */
function alarm(scope: Construct, id: string, props: AlarmProps): Alarm {
  return new Alarm(scope, id, { treatMissingData: TreatMissingData.NOT_BREACHING, ...props });
}

/** Task outcomes, from the worker's metrics. */
function taskAlarms(scope: Construct): Alarm[] {
  return [
    alarm(scope, 'FailedTaskRate', {
      alarmDescription:
        `More than ${FAILED_TASK_RATE_THRESHOLD * 100}% of the tasks that ended in two of three ` +
        `${FAILED_RATE_PERIOD.toHumanString()} periods failed. Look for "${LOG_EVENTS.taskEnded}" lines with "status":"failed" in the worker logs.`,
      metric: taskMetric('TaskFailed', Stats.AVERAGE, FAILED_RATE_PERIOD),
      threshold: FAILED_TASK_RATE_THRESHOLD,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    }),
  ];
}

/** Work that waits too long: the task queue and its dead-letter queue. */
function queueAlarms(scope: Construct, props: OperationsProps): Alarm[] {
  const { queue, deadLetterQueue } = props.tasks;
  const fiveMinutes = Duration.minutes(5);
  // Work older than a threshold: a message may legitimately wait for its
  // longest delay (a durable timer) plus one visibility timeout (one failed
  // delivery); older means the queue is not draining or deliveries keep failing.
  const oldestAllowed = MAX_SQS_DELAY.plus(props.tasks.visibilityTimeout);
  // The dead-letter handler drains the DLQ on every sweep: a message older
  // than a few sweeps is one it cannot handle (or a handler that does not run).
  const deadLetterAllowed = Duration.minutes(Math.max(15, 5 * props.sweepInterval.toMinutes()));
  return [
    alarm(scope, 'TaskQueueBacklogAge', {
      alarmDescription: `The oldest task message is older than ${oldestAllowed.toHumanString()}: the worker is not keeping up or keeps failing.`,
      metric: queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: Stats.MAXIMUM }),
      threshold: oldestAllowed.toSeconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    }),
    alarm(scope, 'DeadLetterQueueNotDrained', {
      alarmDescription:
        `A dead-lettered message is older than ${deadLetterAllowed.toHumanString()}: the dead-letter handler cannot ` +
        `mark its task failed. Check its logs for "${LOG_EVENTS.deadLetterError}".`,
      metric: deadLetterQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: Stats.MAXIMUM }),
      threshold: deadLetterAllowed.toSeconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    }),
    ...(props.workflowEvents ? [workflowEventsAlarm(scope, props.workflowEvents)] : []),
  ];
}

/**
 * A workflow's end the workflow-events function could not take after
 * EventBridge's retries: its task is settled by the sweeper's next look at
 * the execution (at most a day later), but the function is failing.
 */
function workflowEventsAlarm(scope: Construct, deadLetterQueue: Queue): Alarm {
  return alarm(scope, 'WorkflowEventsDeadLettered', {
    alarmDescription:
      "A workflow's status-change event reached the workflow-events dead-letter queue: the function failed on it through " +
      "EventBridge's retries. Its task still ends at the sweeper's next look at the execution (within a day). Check the " +
      "function's errors, and the message attributes (ERROR_CODE, ERROR_MESSAGE) EventBridge adds.",
    metric: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: Duration.minutes(5), statistic: Stats.MAXIMUM }),
    threshold: 0,
    comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
    evaluationPeriods: 1,
  });
}

/** Invocations that failed as a whole: worker, sweeper, and the MCP function behind the API. */
function functionAlarms(scope: Construct, props: OperationsProps): Alarm[] {
  const { worker, sweeper } = props;
  const fiveMinutes = Duration.minutes(5);
  // The sweeper is the only path back for a task whose message was lost or
  // whose worker died, so a sweeper that keeps failing needs a person. One
  // failed run is not enough (the next one, a minute later, retries): it must
  // fail in two consecutive periods, each at least one sweep interval long.
  const sweeperPeriod = Duration.minutes(Math.max(5, props.sweepInterval.toMinutes()));
  return [
    // Per-record failures are partial batch responses, not errors: this
    // counts invocations that crashed, ran out of memory or timed out.
    alarm(scope, 'WorkerErrors', {
      alarmDescription: 'Worker invocations failed as a whole (crash, out of memory or timeout).',
      metric: worker.function.metricErrors({ period: fiveMinutes, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    }),
    alarm(scope, 'SweeperErrors', {
      alarmDescription:
        `The sweeper failed in two consecutive ${sweeperPeriod.toHumanString()} periods: stuck tasks are not being ` +
        `re-enqueued. Check its logs.`,
      metric: sweeper.function.metricErrors({ period: sweeperPeriod, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
    }),
    // JSON-RPC errors are 200s; a 5xx is a crashed, timed-out or throttled MCP function.
    alarm(scope, 'Api5xx', {
      alarmDescription: 'The MCP endpoint answered 5xx: the MCP function failed, timed out or was throttled.',
      metric: props.api.httpApi.metricServerError({ period: fiveMinutes, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    }),
  ];
}

/** Sends alarm and OK notifications of every alarm to an existing SNS topic. */
function notify(scope: Construct, alarms: readonly Alarm[], topicArn: string): void {
  const action = new SnsAction(Topic.fromTopicArn(scope, 'AlarmTopic', topicArn));
  for (const each of alarms) {
    each.addAlarmAction(action);
    each.addOkAction(action);
  }
}

/** The dashboard: a heading, then one row each for tasks, the task queue, and the API and functions. */
function operationsDashboard(scope: Construct, props: OperationsProps): Dashboard {
  const dashboard = new Dashboard(scope, 'Dashboard', { defaultInterval: Duration.hours(3) });
  dashboard.addWidgets(
    new TextWidget({
      markdown:
        `## MCP tasks\nTask metrics are embedded in the functions' log lines (namespace \`${METRICS_NAMESPACE}\`); the rest ` +
        `are AWS metrics.`,
      width: 24,
      height: 2,
    }),
  );
  dashboard.addWidgets(...taskOutcomeWidgets());
  dashboard.addWidgets(...taskTimeAndQueueWidgets(props.tasks));
  dashboard.addWidgets(...apiAndFunctionWidgets(props));
  return dashboard;
}

function taskOutcomeWidgets(): GraphWidget[] {
  const fiveMinutes = Duration.minutes(5);
  const ended = (status: string) =>
    new Metric({
      namespace: METRICS_NAMESPACE,
      metricName: 'TasksEnded',
      dimensionsMap: { status },
      statistic: Stats.SUM,
      period: fiveMinutes,
      label: status,
    });
  return [
    new GraphWidget({
      title: 'Tasks created and ended',
      left: [taskMetric('TasksCreated', Stats.SUM, fiveMinutes, 'created'), ended('completed'), ended('failed'), ended('cancelled')],
      width: 8,
    }),
    new GraphWidget({
      title: 'Failure rate of ended tasks',
      left: [taskMetric('TaskFailed', Stats.AVERAGE, FAILED_RATE_PERIOD, 'failed / ended')],
      leftYAxis: { min: 0, max: 1 },
      width: 8,
    }),
    new GraphWidget({
      title: 'Retries and dead-lettered tasks',
      left: [
        taskMetric('TaskRetries', Stats.SUM, fiveMinutes, 'retries'),
        taskMetric('TasksDeadLettered', Stats.SUM, fiveMinutes, 'dead-lettered'),
      ],
      width: 8,
    }),
  ];
}

function taskTimeAndQueueWidgets({ queue, deadLetterQueue }: TaskQueue): GraphWidget[] {
  const fiveMinutes = Duration.minutes(5);
  const oneMinute = Duration.minutes(1);
  return [
    new GraphWidget({
      title: `Task duration and time queued (${TASK_METRICS.TaskDuration})`,
      left: [
        taskMetric('TaskDuration', Stats.p(50), fiveMinutes, 'duration p50'),
        taskMetric('TaskDuration', Stats.p(99), fiveMinutes, 'duration p99'),
      ],
      right: [taskMetric('TimeQueued', Stats.p(99), fiveMinutes, 'queued p99')],
      width: 8,
    }),
    new GraphWidget({
      title: 'Task queue depth',
      left: [
        queue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'waiting' }),
        queue.metricApproximateNumberOfMessagesNotVisible({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'in flight' }),
        queue.metricApproximateNumberOfMessagesDelayed({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'delayed' }),
      ],
      right: [
        deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'dead-lettered' }),
      ],
      width: 8,
    }),
    new GraphWidget({
      title: 'Age of oldest task message (s)',
      left: [queue.metricApproximateAgeOfOldestMessage({ period: oneMinute, statistic: Stats.MAXIMUM })],
      width: 8,
    }),
  ];
}

function apiAndFunctionWidgets(props: OperationsProps): GraphWidget[] {
  const api = props.api.httpApi;
  const { worker, sweeper } = props;
  const fiveMinutes = Duration.minutes(5);
  const oneMinute = Duration.minutes(1);
  return [
    new GraphWidget({
      title: 'API latency (ms)',
      left: [
        api.metricLatency({ period: oneMinute, statistic: Stats.p(50) }),
        api.metricLatency({ period: oneMinute, statistic: Stats.p(99) }),
        api.metricIntegrationLatency({ period: oneMinute, statistic: Stats.p(99) }),
      ],
      width: 8,
    }),
    new GraphWidget({
      title: 'API requests and errors',
      left: [api.metricCount({ period: oneMinute, statistic: Stats.SUM })],
      right: [
        api.metricClientError({ period: oneMinute, statistic: Stats.SUM }),
        api.metricServerError({ period: oneMinute, statistic: Stats.SUM }),
      ],
      width: 8,
    }),
    new GraphWidget({
      title: 'Worker and sweeper',
      left: [
        worker.function.metricInvocations({ period: fiveMinutes, statistic: Stats.SUM }),
        worker.function.metricErrors({ period: fiveMinutes, statistic: Stats.SUM }),
        sweeper.function.metricErrors({ period: fiveMinutes, statistic: Stats.SUM }),
      ],
      right: [worker.function.metricDuration({ period: fiveMinutes, statistic: Stats.p(99) })],
      width: 8,
    }),
  ];
}
