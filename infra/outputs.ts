/** The stack outputs the operator commands need (defined by `McpTasks` in `infra/mcp-tasks.ts`, written by the local stack too). */
export const OPS_OUTPUTS = {
  tableName: 'OpsTableName',
  queueUrl: 'OpsTaskQueueUrl',
  deadLetterQueueUrl: 'OpsDeadLetterQueueUrl',
  activeIndexShards: 'OpsActiveIndexShards',
} as const;

/** The local stack's extra keys in its `outputs.json`: the emulators' endpoints. */
export const LOCAL_OUTPUTS = { dynamodbEndpoint: 'LocalDynamoDbEndpoint', sqsEndpoint: 'LocalSqsEndpoint', region: 'LocalRegion' } as const;

/** The stack outputs naming the lifecycle events' bus (absent with `-c events=off`). */
export const EVENT_OUTPUTS = { busName: 'EventBusName', busArn: 'EventBusArn' } as const;
