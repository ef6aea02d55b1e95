/**
 * How an execution's end becomes its task's outcome:
 * - SUCCEEDED: the result. `structuredContent` is the output (an object as it
 *   is, anything else as `{ output }`); the text is the tool's own mapping or,
 *   by default, the output's JSON cut at 2,000 characters, with a note of what
 *   is in `structuredContent`.
 * - FAILED, TIMED_OUT: a tool error naming the error and the cause.
 * - ABORTED: the task ends `cancelled`: "by its caller" when the stop came
 *   from this server (its `StopExecution` carries {@link CANCELLED_ERROR}),
 *   "stopped outside this server" otherwise.
 *
 * No AWS SDK in here: this module is part of every bundle.
 */
import { StoppedError } from '../runtime/run-types.ts';
import type { ToolResult } from '../runtime/tool.ts';
import type { WorkflowEnd } from '../tasks/workflows-model.ts';

/** The error this server's `StopExecution` carries (a cancel of the task). */
export const CANCELLED_ERROR = 'mcp-tasks.Cancelled';

/** The default text's longest output JSON. */
export const MAX_OUTPUT_TEXT_CHARS = 2000;

/** What a workflow tool says of its output, its name and how its output reads as text. */
export interface WorkflowNaming {
  /** The workflow's name, as the task's status and errors say it. */
  workflow: string;
  /** The tool's mapping of the output to text, if any. */
  text?: (output: unknown) => string;
}

/** The task's result for an execution that ended `SUCCEEDED`, `FAILED` or `TIMED_OUT`; throws {@link StoppedError} for `ABORTED`. */
export function resultOfEnd(end: WorkflowEnd & { output?: unknown }, naming: WorkflowNaming): ToolResult {
  switch (end.status) {
    case 'SUCCEEDED':
      return succeeded(end.output ?? null, naming);
    case 'FAILED':
    case 'TIMED_OUT': {
      const what = end.status === 'FAILED' ? 'failed' : 'timed out';
      const message = `The workflow ${naming.workflow} ${what}${failureText(end)}`;
      return {
        content: [{ type: 'text', text: message }],
        structuredContent: { status: end.status, ...pick(end), message },
        isError: true,
      };
    }
    case 'ABORTED':
      throw new StoppedError(
        end.error === CANCELLED_ERROR
          ? `Cancelled by its caller; the workflow ${naming.workflow} was stopped`
          : `The workflow ${naming.workflow} was stopped outside this server${end.error ? ` (${end.error})` : ''}`,
      );
  }
}

function succeeded(output: unknown, naming: WorkflowNaming): ToolResult {
  const structuredContent =
    typeof output === 'object' && output !== null && !Array.isArray(output) ? (output as Record<string, unknown>) : { output };
  return { content: [{ type: 'text', text: naming.text ? naming.text(output) : outputText(output) }], structuredContent };
}

/** The default text: the output's JSON, cut at {@link MAX_OUTPUT_TEXT_CHARS} with a note that the whole is in `structuredContent`. */
export function outputText(output: unknown): string {
  const json = JSON.stringify(output) ?? 'null';
  if (json.length <= MAX_OUTPUT_TEXT_CHARS) return json;
  return `${json.slice(0, MAX_OUTPUT_TEXT_CHARS)}… (cut at ${MAX_OUTPUT_TEXT_CHARS.toLocaleString('en')} characters; the whole output is in structuredContent)`;
}

/**
 * `: <error> (<cause>)`, or `: <cause>` alone when the cause already begins
 * with the error's name ("Rejected by Bob: not this week"): never "Rejected (Rejected)".
 */
function failureText({ error, cause }: WorkflowEnd): string {
  if (error && cause && (cause === error || cause.startsWith(`${error} `) || cause.startsWith(`${error}:`))) return `: ${cause}`;
  return `${error ? `: ${error}` : ''}${cause ? ` (${cause})` : ''}`;
}

function pick(end: WorkflowEnd): { error?: string; cause?: string } {
  return { ...(end.error === undefined ? {} : { error: end.error }), ...(end.cause === undefined ? {} : { cause: end.cause }) };
}
