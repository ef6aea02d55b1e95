import type { LocalStates } from 'mcp-tasks-serverless';

/**
 * Local handlers for your workflows' Task states: `npm start` runs your state machines in a Step Functions emulator,
 * which calls no AWS service. A Task state of another service (SNS, SQS, EventBridge, DynamoDB, an AWS SDK
 * integration, an activity) or one invoking a Lambda function of yours runs here by its handler; without one, the
 * execution fails at that state with a message naming it and this file. Deployed, this file plays no part: it is
 * never bundled.
 *
 * Keys are a state's name or a resource ARN (the state's name wins). A handler gets the state's input (after
 * `Parameters`) and returns its result; a thrown error's `name` is the state's error, so `Catch` and `Retry` match it.
 * In a `.waitForTaskToken` state it gets `taskToken`, and the state waits for `SendTaskSuccess` with that token.
 */
export default {
  // By state name:
  // Notify: async (input, { stateName }) => {
  //   console.log(`${stateName} would publish`, input);
  //   return { MessageId: 'local' };
  // },
  //
  // By resource, for every state that calls it; a thrown error's name is the state's error:
  // 'arn:aws:states:::dynamodb:getItem': async () => {
  //   throw Object.assign(new Error('no such item'), { name: 'ItemNotFound' });
  // },
  //
  // A Lambda function of yours, by its ARN: the module (from the project's root) whose `handler` export runs.
  // 'arn:aws:lambda:us-east-1:123456789012:function:enrich': 'src/functions/enrich.ts',
} satisfies LocalStates;
