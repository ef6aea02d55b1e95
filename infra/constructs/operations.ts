import { Duration } from 'aws-cdk-lib';
import {
  Alarm,
  ComparisonOperator,
  Dashboard,
  GraphWidget,
  LogQueryVisualizationType,
  LogQueryWidget,
  MathExpression,
  Stats,
  TextWidget,
  TreatMissingData,
} from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
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
  /** An existing SNS topic that receives alarm and OK notifications; without it the alarms only change state. */
  readonly alarmTopicArn?: string;
}

/**
 * Alarms on what needs a person, and one dashboard.
 *
 * Task counts: the functions write one JSON line per event through their log
 * sink (`shared/log.ts`): `task-created` (MCP function) when a task is
 * created, and `task-ended` with its terminal `status` once per task that
 * reaches one (the worker; the MCP function for a cancel that ends a task at
 * once; the DLQ handler for a task it fails), and `swept` per task the
 * sweeper re-enqueues. The lines are bare JSON on stdout (no runtime prefix),
 * with the request id and task id of the request or message that logged
 * them. The dashboard counts tasks with Logs Insights queries over them,
 * which cost nothing at rest (no custom metrics) and a fraction of a cent per
 * view at this log volume.
 * Lambda metrics cannot tell completed from failed: the worker reports task
 * outcomes, not invocation errors.
 */
export class Operations extends Construct {
  readonly alarms: Alarm[] = [];
  readonly dashboard: Dashboard;

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const { queue, deadLetterQueue, worker, deadLetterHandler, sweeper } = props.tasks;
    const api = props.api.httpApi;
    const oneMinute = Duration.minutes(1);
    const fiveMinutes = Duration.minutes(5);

    // The DLQ handler drains the DLQ within seconds, so "not empty" means it
    // keeps failing: count messages being handled (not visible) as well as
    // waiting ones, or a message stuck in its retry cycle would hide between samples.
    const deadLetterDepth = new MathExpression({
      label: 'Dead-lettered messages (visible + in flight)',
      expression: 'visible + inflight',
      usingMetrics: {
        visible: deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: Stats.MAXIMUM }),
        inflight: deadLetterQueue.metricApproximateNumberOfMessagesNotVisible({ period: oneMinute, statistic: Stats.MAXIMUM }),
      },
      period: oneMinute,
    });
    this.alarm('DeadLetterQueueNotEmpty', {
      alarmDescription: 'Messages sit in the task dead-letter queue: the DLQ handler cannot mark their tasks failed. Check its logs.',
      metric: deadLetterDepth,
      threshold: 0,
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
    });
    this.alarm('TasksDeadLettered', {
      alarmDescription: 'A task message failed on every delivery and was dead-lettered; its task is now failed. Check the worker logs for "error" events.',
      metric: deadLetterHandler.function.metricInvocations({ period: fiveMinutes, statistic: Stats.SUM }),
      threshold: 1,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
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
    // A message may legitimately wait for its longest delay (a durable timer)
    // plus one visibility timeout (one failed delivery); older means the
    // queue is not draining or deliveries keep failing.
    const oldestAllowed = MAX_SQS_DELAY.plus(props.tasks.visibilityTimeout);
    this.alarm('TaskQueueBacklogAge', {
      alarmDescription: `The oldest task message is older than ${oldestAllowed.toHumanString()}: the worker is not keeping up or keeps failing.`,
      metric: queue.metricApproximateAgeOfOldestMessage({ period: fiveMinutes, statistic: Stats.MAXIMUM }),
      threshold: oldestAllowed.toSeconds(),
      comparisonOperator: ComparisonOperator.GREATER_THAN_THRESHOLD,
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

    const taskLogGroups = [props.mcp.logGroup.logGroupName, worker.logGroup.logGroupName, deadLetterHandler.logGroup.logGroupName];
    const countWidget = (title: string, filter: string, logGroupNames = taskLogGroups, width = 8) =>
      new LogQueryWidget({
        title,
        logGroupNames,
        queryLines: [`filter ${filter}`, 'stats count(*) as tasks by bin(5m)'],
        view: LogQueryVisualizationType.LINE,
        width,
      });
    const ended = (status: string) => `@message like /"event":"task-ended"/ and @message like /"status":"${status}"/`;

    this.dashboard = new Dashboard(this, 'Dashboard', { defaultInterval: Duration.hours(3) });
    this.dashboard.addWidgets(
      new TextWidget({
        markdown: '## MCP tasks\nTask counts come from the functions\' JSON log lines (Logs Insights); everything else from AWS metrics.',
        width: 24,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      countWidget('Tasks created', '@message like /"event":"task-created"/', [props.mcp.logGroup.logGroupName]),
      countWidget('Tasks completed', ended('completed')),
      countWidget('Tasks failed', ended('failed')),
    );
    this.dashboard.addWidgets(
      new GraphWidget({
        title: 'Task queue depth',
        left: [
          queue.metricApproximateNumberOfMessagesVisible({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'waiting' }),
          queue.metricApproximateNumberOfMessagesNotVisible({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'in flight' }),
          queue.metricApproximateNumberOfMessagesDelayed({ period: oneMinute, statistic: Stats.MAXIMUM, label: 'delayed' }),
        ],
        right: [deadLetterDepth],
        width: 8,
      }),
      new GraphWidget({
        title: 'Age of oldest task message (s)',
        left: [queue.metricApproximateAgeOfOldestMessage({ period: oneMinute, statistic: Stats.MAXIMUM })],
        width: 8,
      }),
      new GraphWidget({
        title: 'Worker',
        left: [
          worker.function.metricInvocations({ period: fiveMinutes, statistic: Stats.SUM }),
          worker.function.metricErrors({ period: fiveMinutes, statistic: Stats.SUM }),
          worker.function.metricThrottles({ period: fiveMinutes, statistic: Stats.SUM }),
        ],
        right: [worker.function.metricDuration({ period: fiveMinutes, statistic: Stats.p(99) })],
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
        width: 12,
      }),
      new GraphWidget({
        title: 'API requests and errors',
        left: [api.metricCount({ period: oneMinute, statistic: Stats.SUM })],
        right: [
          api.metricClientError({ period: oneMinute, statistic: Stats.SUM }),
          api.metricServerError({ period: oneMinute, statistic: Stats.SUM }),
        ],
        width: 12,
      }),
    );
    this.dashboard.addWidgets(
      countWidget('Tasks cancelled', ended('cancelled'), taskLogGroups, 12),
      countWidget('Tasks re-enqueued by the sweeper', '@message like /"event":"swept"/', [sweeper.logGroup.logGroupName], 6),
      new GraphWidget({
        title: 'Sweeper runs',
        left: [
          sweeper.function.metricInvocations({ period: fiveMinutes, statistic: Stats.SUM }),
          sweeper.function.metricErrors({ period: fiveMinutes, statistic: Stats.SUM }),
        ],
        width: 6,
      }),
    );
  }

  private alarm(id: string, props: ConstructorParameters<typeof Alarm>[2]): Alarm {
    const alarm = new Alarm(this, id, { treatMissingData: TreatMissingData.NOT_BREACHING, ...props });
    this.alarms.push(alarm);
    return alarm;
  }
}
