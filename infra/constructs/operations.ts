import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Dashboard, GraphWidget, Metric, Stats, TextWidget, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
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
  /** How often the sweeper runs: its error alarm looks at periods at least this long. */
  readonly sweepInterval: Duration;
  /** Whether to create the dashboard ($3 a month at list price). */
  readonly dashboard: boolean;
  /** An existing SNS topic that receives alarm and OK notifications; without it the alarms only change state. */
  readonly alarmTopicArn?: string;
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
  readonly alarms: Alarm[] = [];
  readonly dashboard?: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const { queue, deadLetterQueue, worker, sweeper } = props.tasks;
    const api = props.api.httpApi;
    const oneMinute = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);
    const taskMetric = (name: TaskMetric, statistic: string, period = fiveMinutes, label?: string) =>
      new Metric({ namespace: METRICS_NAMESPACE, metricName: name, statistic, period, ...(label ? { label } : {}) });

    this.alarm('FailedTaskRate', {
      alarmDescription: `More than ${FAILED_TASK_RATE_THRESHOLD * 100}% of the tasks that ended in two of three ${FAILED_RATE_PERIOD.toHumanString()} periods failed. Look for "task-ended" lines with "status":"failed" in the worker logs.`,
      metric: taskMetric('TaskFailed', Stats.AVERAGE, FAILED_RATE_PERIOD),
      threshold: FAILED_TASK_RATE_THRESHOLD,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
    });
    // Work older than a threshold: a message may legitimately wait for its
    // longest delay (a durable timer) plus one visibility timeout (one failed
    // delivery); older means the queue is not draining or deliveries keep failing.
    const oldestAllowed = MAX_SQS_DELAY.plus(props.tasks.visibilityTimeout);
    this.alarm('TaskQueueBacklogAge', {
      alarmDescription: `The oldest task message is older than ${oldestAllowed.toHumanString()}: the worker is not keeping up or keeps failing.`,
      metric: queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: Stats.MAXIMUM }),
      threshold: oldestAllowed.toSeconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
    // The dead-letter handler drains the DLQ on every sweep: a message older
    // than a few sweeps is one it cannot handle (or a handler that does not run).
    const deadLetterAllowed = Duration.minutes(Math.max(15, 5 * props.sweepInterval.toMinutes()));
    this.alarm('DeadLetterQueueNotDrained', {
      alarmDescription: `A dead-lettered message is older than ${deadLetterAllowed.toHumanString()}: the dead-letter handler cannot mark its task failed. Check its logs for "dead-letter-error".`,
      metric: deadLetterQueue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: Stats.MAXIMUM }),
      threshold: deadLetterAllowed.toSeconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
    // Per-record failures are partial batch responses, not errors: this
    // counts invocations that crashed, ran out of memory or timed out.
    this.alarm('WorkerErrors', {
      alarmDescription: 'Worker invocations failed as a whole (crash, out of memory or timeout).',
      metric: worker.function.metricErrors({ period: fiveMinutes, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });
    // The sweeper is the only path back for a task whose message was lost or
    // whose worker died, so a sweeper that keeps failing needs a person. One
    // failed run is not enough (the next one, a minute later, retries): it must
    // fail in two consecutive periods, each at least one sweep interval long.
    const sweeperPeriod = Duration.minutes(Math.max(5, props.sweepInterval.toMinutes()));
    this.alarm('SweeperErrors', {
      alarmDescription: `The sweeper failed in two consecutive ${sweeperPeriod.toHumanString()} periods: stuck tasks are not being re-enqueued. Check its logs.`,
      metric: sweeper.function.metricErrors({ period: sweeperPeriod, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 2,
      datapointsToAlarm: 2,
    });
    // JSON-RPC errors are 200s; a 5xx is a crashed, timed-out or throttled MCP function.
    this.alarm('Api5xx', {
      alarmDescription: 'The MCP endpoint answered 5xx: the MCP function failed, timed out or was throttled.',
      metric: api.metricServerError({ period: fiveMinutes, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
    });

    if (props.alarmTopicArn) {
      const action = new SnsAction(Topic.fromTopicArn(this, 'AlarmTopic', props.alarmTopicArn));
      for (const alarm of this.alarms) {
        alarm.addAlarmAction(action);
        alarm.addOkAction(action);
      }
    }

    if (!props.dashboard) return;
    const ended = (status: string) =>
      new Metric({ namespace: METRICS_NAMESPACE, metricName: 'TasksEnded', dimensionsMap: { status }, statistic: Stats.SUM, period: fiveMinutes, label: status });
    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: `## MCP tasks\nTask metrics are embedded in the functions' log lines (namespace \`${METRICS_NAMESPACE}\`); the rest are AWS metrics.`,
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
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
        left: [taskMetric('TaskRetries', Stats.SUM, fiveMinutes, 'retries'), taskMetric('TasksDeadLettered', Stats.SUM, fiveMinutes, 'dead-lettered')],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: `Task duration and time queued (${TASK_METRICS.TaskDuration})`,
        left: [taskMetric('TaskDuration', Stats.p(50), fiveMinutes, 'duration p50'), taskMetric('TaskDuration', Stats.p(99), fiveMinutes, 'duration p99')],
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
        right: [deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'dead-lettered' })],
        width: 8,
      }),
      new GraphWidget({
        title: 'Age of oldest task message (s)',
        left: [queue.metricApproximateAgeOfOldestMessage({ period: oneMinute, statistic: Stats.MAXIMUM })],
        width: 8,
      }),
    );
    this.dashboard.addWidgets(
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
        right: [api.metricClientError({ period: oneMinute, statistic: Stats.SUM }), api.metricServerError({ period: oneMinute, statistic: Stats.SUM })],
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
    );
  }

  private alarm(id: string, props: ConstructorParameters<typeof Alarm>[2]): Alarm {
    const alarm = new Alarm(this, id, { treatMissingData: TreatMissingData.NOT_BREACHING, ...props });
    this.alarms.push(alarm);
    return alarm;
  }
}
