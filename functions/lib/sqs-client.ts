/**
 * The SQS client, created once per execution environment. Its endpoint comes
 * from the standard `AWS_ENDPOINT_URL_SQS` variable when set (the local stack
 * sets it), so the same code runs against AWS and fauxqs.
 */
import { SQSClient } from '@aws-sdk/client-sqs';

// Requests go to the client's endpoint, not to the QueueUrl's host: on AWS the
// two are the same origin (this is a no-op), while `AWS_ENDPOINT_URL_SQS` does
// not count as a custom endpoint for the SDK's QueueUrl rewrite, so emulator
// queue URLs (e.g. fauxqs' `sqs.us-east-1.localhost`) would otherwise win.
export const sqs = new SQSClient({ useQueueUrlAsEndpoint: false });
