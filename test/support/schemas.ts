/**
 * Validation of our wire responses against the extension's own zod schemas
 * (`@modelcontextprotocol/ext-tasks/core/v2`), so the tests hold the endpoint
 * to an independent definition of the shapes rather than to our own types.
 *
 * The v2 object schemas are not strict (unknown keys pass), so keys that must
 * be absent (e.g. `result` on a `CreateTaskResult`) are checked by the tests.
 */
import { AssertionError } from 'node:assert';
import {
  CallToolResultV2Schema,
  CancelTaskResultV2Schema,
  CreateTaskResultV2Schema,
  DetailedTaskV2Schema,
  ErrorV2Schema,
  GetTaskResultV2Schema,
  InputRequestsV2Schema,
  TaskStatusNotificationV2Schema,
  TaskSubscriptionAcknowledgedNotificationsV2Schema,
  ToolV2Schema,
  UpdateTaskResultV2Schema,
} from '@modelcontextprotocol/ext-tasks/core/v2';

/** The one method used here; typing the table this way keeps tsc from expanding every schema type. */
interface Validator {
  safeParse(
    value: unknown,
  ): { success: true } | { success: false; error: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } };
}

/** The schemas the tests validate against, by the name of the wire type they describe. */
const SCHEMAS = {
  /** A synchronous `tools/call` result (`complete` or `input_required`). */
  CallToolResult: CallToolResultV2Schema,
  /** The flat `tools/call` result that hands out a task (spec §1.4). */
  CreateTaskResult: CreateTaskResultV2Schema,
  /** The `tasks/get` result: a `DetailedTask` with `resultType: "complete"` (spec §1.5). */
  GetTaskResult: GetTaskResultV2Schema,
  DetailedTask: DetailedTaskV2Schema,
  /** The empty `tasks/update` ack (spec §1.6). */
  UpdateTaskResult: UpdateTaskResultV2Schema,
  /** The empty `tasks/cancel` ack (spec §1.7). */
  CancelTaskResult: CancelTaskResultV2Schema,
  /** A JSON-RPC error object (also the `error` of a failed task). */
  Error: ErrorV2Schema,
  InputRequests: InputRequestsV2Schema,
  Tool: ToolV2Schema,
  TaskStatusNotification: TaskStatusNotificationV2Schema,
  /** `params.notifications` of `notifications/subscriptions/acknowledged`. */
  TaskSubscriptionAcknowledgedNotifications: TaskSubscriptionAcknowledgedNotificationsV2Schema,
} as const satisfies Record<string, Validator>;

export type SchemaName = keyof typeof SCHEMAS;
const VALIDATORS: Record<SchemaName, Validator> = SCHEMAS;

/** Throws an `AssertionError` listing every issue when `value` is not a valid `name`. */
export function assertValid(name: SchemaName, value: unknown): void {
  const parsed = VALIDATORS[name].safeParse(value);
  if (parsed.success) return;
  const issues = parsed.error.issues.map((issue) => `  ${issue.path.map(String).join('.') || '(root)'}: ${issue.message}`).join('\n');
  throw new AssertionError({
    message: `Expected a valid ${name} (ext-tasks core/v2):\n${issues}\nvalue: ${JSON.stringify(value)}`,
    actual: value,
    expected: name,
    operator: 'assertValid',
  });
}
