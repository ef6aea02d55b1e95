import { RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AttributeType, BillingMode, type CfnTable, ProjectionType, Table, TableEncryption } from 'aws-cdk-lib/aws-dynamodb';
import { Grant } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { ACTIVE_INDEX, LIST_INDEX, TABLE_KEYS, TTL_ATTRIBUTE } from '../../shared/tasks/dynamodb/index.ts';
import type { TaskFunction } from './task-function.ts';

export interface TaskTableProps {
  /**
   * What happens to the table (and its tasks) when it leaves the stack.
   * `RETAIN` keeps it and turns on deletion protection; `DESTROY` is for
   * throw-away stacks.
   */
  readonly removalPolicy: RemovalPolicy;
}

/**
 * The task table, laid out by `shared/tasks/dynamodb/schema.ts`: `pk`/`sk`
 * keys, `expiresAt` as the TTL attribute, the sparse index of active tasks and
 * the list index (a person's tasks, newest first).
 *
 * - On-demand capacity: traffic is bursty (a poll per task per second while
 *   clients wait) and idle most of the time; nothing to size, nothing paid at rest.
 * - Point-in-time recovery: task rows hold arguments and results clients may
 *   still fetch; a bad deployment should be recoverable.
 * - Encryption with the AWS managed key (`aws/dynamodb`) rather than the
 *   default AWS-owned key: every use of the key shows in the account's
 *   CloudTrail, at no monthly key cost and with no key policy to get wrong. A
 *   customer managed key (`TableEncryption.CUSTOMER_MANAGED`) would add
 *   revocation and cross-account control for $1/month plus KMS requests, and
 *   `grantReadWriteData` would grant its use automatically.
 */
export class TaskTable extends Construct {
  readonly table: Table;

  constructor(scope: Construct, id: string, props: TaskTableProps) {
    super(scope, id);
    const retain = props.removalPolicy !== RemovalPolicy.DESTROY;
    this.table = new Table(this, 'Table', {
      partitionKey: { name: TABLE_KEYS.partition, type: AttributeType.STRING },
      sortKey: { name: TABLE_KEYS.sort, type: AttributeType.STRING },
      billingMode: BillingMode.PAY_PER_REQUEST,
      timeToLiveAttribute: TTL_ATTRIBUTE,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: TableEncryption.AWS_MANAGED,
      removalPolicy: props.removalPolicy,
      deletionProtection: retain,
    });
    // Keys only: the sweeper needs the task ids that are due (`sweepAt`), and
    // must read each row strongly consistently before acting anyway (an index
    // is eventually consistent), so projecting more would only make every
    // write of an active task cost more.
    this.table.addGlobalSecondaryIndex({
      indexName: ACTIVE_INDEX.name,
      partitionKey: { name: ACTIVE_INDEX.partition, type: AttributeType.STRING },
      sortKey: { name: ACTIVE_INDEX.sort, type: AttributeType.NUMBER },
      projectionType: ProjectionType.KEYS_ONLY,
    });
    // Keys only too, and keys written once: a task row's list entry is made by
    // the put that creates the row and no later write changes it, so a task
    // costs this index one write in its life. A page reads the rows it lists
    // in one batch. Generic key names: every kind of listed entry shares it.
    this.table.addGlobalSecondaryIndex({
      indexName: LIST_INDEX.name,
      partitionKey: { name: LIST_INDEX.partition, type: AttributeType.STRING },
      sortKey: { name: LIST_INDEX.sort, type: AttributeType.STRING },
      projectionType: ProjectionType.KEYS_ONLY,
    });
  }

  /**
   * `grantReadWriteData` on the table for a function, and the acknowledgement
   * of the one wildcard it produces (`<table>/index/*`).
   */
  grantReadWriteData(grantee: TaskFunction): void {
    this.table.grantReadWriteData(grantee.function);
    const stack = Stack.of(this);
    const logicalId = stack.resolve(stack.getLogicalId(this.table.node.defaultChild as CfnTable)) as string;
    Validations.of(grantee.role).acknowledge({
      id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/index/*]`,
      reason:
        'grantReadWriteData scopes the statement to this table and its indexes; "index/*" names the indexes of this one table (only ' +
        'the active-tasks and list indexes exist), not other resources.',
    });
  }

  /**
   * What the console needs and no more: reading rows (`GetItem`), a page of
   * them (`BatchGetItem`) and a task's steps (`Query` on the table), its
   * list (`Query` on the list index), and answering and cancelling
   * (`UpdateItem`: conditional writes of the row, and of an owner's
   * unfinished-task set when a cap is on). Each names its resource exactly:
   * no wildcard, no put or delete.
   */
  grantConsole(grantee: TaskFunction): void {
    Grant.addToPrincipal({
      grantee: grantee.function,
      actions: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
    Grant.addToPrincipal({
      grantee: grantee.function,
      actions: ['dynamodb:Query'],
      resourceArns: [`${this.table.tableArn}/index/${LIST_INDEX.name}`],
    });
  }

  /**
   * What the workflow receiver and the workflow-events function need and no
   * more: reading a task's row and writing it conditionally (a question, a
   * progress message, an execution's end). No query, put or delete.
   */
  grantWorkflows(grantee: TaskFunction): void {
    Grant.addToPrincipal({
      grantee: grantee.function,
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
  }

  /**
   * What the callbacks function needs and no more: reading a task's row and
   * writing it conditionally (a completion, a heartbeat). No query, put or delete.
   */
  grantCallbacks(grantee: TaskFunction): void {
    Grant.addToPrincipal({
      grantee: grantee.function,
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
  }

  /**
   * What the sweeper needs and no more: `Query` on the active-tasks index
   * (finding due tasks) and `UpdateItem` on the table (moving a due task's
   * `sweepAt` on, conditionally, before re-enqueueing it). Both name their
   * resource exactly, so there is no wildcard to acknowledge. The table's
   * AWS managed key needs no grant.
   */
  grantSweep(grantee: TaskFunction): void {
    Grant.addToPrincipal({
      grantee: grantee.function,
      actions: ['dynamodb:Query'],
      resourceArns: [`${this.table.tableArn}/index/${ACTIVE_INDEX.name}`],
    });
    // Not `table.grant`, which would add `<table>/index/*` to an action that only applies to the table.
    // GetItem: ending a wait for input past its deadline reads the row it rewrites.
    Grant.addToPrincipal({
      grantee: grantee.function,
      actions: ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      resourceArns: [this.table.tableArn],
    });
  }
}
