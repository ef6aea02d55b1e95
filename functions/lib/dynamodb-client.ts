/**
 * The DynamoDB client, created once per execution environment. Its endpoint
 * comes from the standard `AWS_ENDPOINT_URL_DYNAMODB` variable when set (the
 * local stack sets it), so the same code runs against AWS and dynalite.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const dynamodb = new DynamoDBClient({});
