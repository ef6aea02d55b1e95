/**
 * A task as the 2026-07-28 wire carries it, for those who read it: the
 * `Task` fields of every task-bearing message (spec §1.2) and the member a
 * `tasks/get` result adds for its status (§1.3). `render.ts` writes these
 * (its output is checked against this type); the CLI's client reads them.
 * Types only: nothing here reaches a bundle.
 */
import type { InputRequest, JsonRpcErrorObject, TaskStatus } from '../tasks/model.ts';

/** A `tasks/get` result (`DetailedTask`), or a `CreateTaskResult`'s task fields (which carry none of the status members). */
export interface DetailedTask {
  taskId: string;
  status: TaskStatus;
  /** The server's words for the task's state; for an ended task, how it ended. */
  statusMessage?: string;
  /** ISO 8601. */
  createdAt: string;
  /** ISO 8601. */
  lastUpdatedAt: string;
  /** How long the task stays readable from `createdAt` (`null`: unlimited). */
  ttlMs: number | null;
  /** How long to wait before the next `tasks/get`. */
  pollIntervalMs?: number;
  /** `input_required`: the outstanding requests, by key. */
  inputRequests?: Record<string, InputRequest>;
  /** `completed`: the tool's `CallToolResult` (also when it has `isError: true`). */
  result?: Record<string, unknown>;
  /** `failed`: the JSON-RPC error the task ended with. */
  error?: JsonRpcErrorObject;
}
