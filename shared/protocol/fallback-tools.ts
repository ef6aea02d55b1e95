/**
 * The fallback tools as a model meets them in `tools/list`: their names
 * (reserved while the fallback is on), argument schemas and descriptions.
 * What their results say is `fallback-texts.ts`; what they do, `fallback.ts`.
 */
import * as z from 'zod';
import { MAX_TASK_ID_LENGTH } from '../tasks/limits.ts';

export const TASK_STATUS = 'task_status';
export const TASK_ANSWER = 'task_answer';
export const TASK_CANCEL = 'task_cancel';

/** The fallback tools' names: reserved while the fallback is on. */
export const FALLBACK_TOOL_NAMES: readonly string[] = [TASK_STATUS, TASK_ANSWER, TASK_CANCEL];

const TaskId = z
  .string()
  .min(1)
  .max(MAX_TASK_ID_LENGTH)
  .describe('The task id, exactly as a tool result or task_status gave it (e.g. "3f0c…")');

export const StatusArgs = z.object({
  taskId: TaskId,
  waitSeconds: z
    .number()
    .int()
    .min(0)
    .max(20)
    .optional()
    .describe('Wait up to this many seconds (at most 20) for the task to end or to ask something, instead of answering at once'),
});
export const AnswerArgs = z.object({
  taskId: TaskId,
  answers: z
    .record(z.string(), z.unknown())
    .describe(
      'Answers keyed exactly as the questions are: for each key, an object matching that question\'s schema, e.g. {"name": {"name": "Ada"}}',
    ),
});
export const CancelArgs = z.object({ taskId: TaskId });

/** The fallback tools as `tools/list` describes them, written for a model. */
export function fallbackToolList() {
  const entry = (name: string, title: string, description: string, schema: z.ZodType) => ({
    name,
    title,
    description,
    inputSchema: z.toJSONSchema(schema, { io: 'input' }) as { type: 'object'; [key: string]: unknown },
  });
  return [
    entry(
      TASK_STATUS,
      'Task status',
      'Checks a background task that an earlier tool call started (its result named the taskId). While the task runs it says so; ' +
        'when the task asks questions it lists them with the schema each answer must match; once the task has ended it returns ' +
        "the tool's own result. Use this instead of calling the original tool again: calling that tool again would start the work a second time. " +
        'Pass waitSeconds (up to 20) to wait for the task to end rather than checking again and again.',
      StatusArgs,
    ),
    answerEntry(
      entry(
        TASK_ANSWER,
        'Answer a task',
        "Answers the questions a background task is waiting on (task_status lists them with each answer's schema). " +
          'Give every answer under its question key, as an object matching that question\'s schema, e.g. {"taskId": "…", "answers": {"name": {"name": "Ada"}}}. ' +
          'Questions marked for the person only (approvals) cannot be answered here: ask the user to answer them.',
        AnswerArgs,
      ),
    ),
    entry(
      TASK_CANCEL,
      'Cancel a task',
      'Stops a background task that an earlier tool call started and that is no longer wanted. The tool does not finish; work it already did is not undone.',
      CancelArgs,
    ),
  ];
}

/** Each answer is an object (its own schema is the question's): said so, rather than a schema that accepts anything. */
function answerEntry<T extends { inputSchema: { type: 'object'; [key: string]: unknown } }>(tool: T): T {
  const properties = tool.inputSchema['properties'] as Record<string, Record<string, unknown>>;
  const { description } = properties['answers'] ?? {};
  properties['answers'] = { type: 'object', description, additionalProperties: { type: 'object', additionalProperties: true } };
  return tool;
}
