/**
 * The names spans carry: the MCP semantic conventions' (gen-ai, `mcp.md`),
 * and ours where they name nothing (a task's id, its phases). Every name of
 * ours is listed in docs/tracing.md.
 */

/** Attributes the MCP semantic conventions name. */
export const MCP_ATTRIBUTES = {
  method: 'mcp.method.name',
  sessionId: 'mcp.session.id',
  protocolVersion: 'mcp.protocol.version',
  requestId: 'jsonrpc.request.id',
  toolName: 'gen_ai.tool.name',
  operation: 'gen_ai.operation.name',
  errorType: 'error.type',
  rpcStatus: 'rpc.response.status_code',
} as const;

/** Attributes of ours, on the spans of a task (the conventions name no task attribute). */
export const TASK_ATTRIBUTES = {
  /** The task's id, on every span of a task (as other MCP projects name it). */
  taskId: 'mcp.task.id',
  /** The phase a span stands for (below). */
  phase: 'mcp.task.phase',
  /** Why a run started: the queue message's reason (`start`, `resume`, `continue`, `wake`, `retry`, `sweep`). */
  runReason: 'mcp.task.run.reason',
  /** The run's attempt (runs started since the task last handed over cleanly). */
  attempt: 'mcp.task.run.attempt',
  /** What a wait waited for: `person`, `client`, `callback`, `workflow`. */
  waitedFor: 'mcp.task.wait.for',
  /** The step's, sleep's or callback's name. */
  stepName: 'mcp.task.step.name',
  /** The task's status once the span ended (when it changed there). */
  status: 'mcp.task.status',
} as const;

/**
 * A task's phases (the same words as the task's timeline): `queued` between
 * a send and the run it starts, `run` a worker run, a `wait:*` from the run
 * that suspended to the resume, `retry` a run after a failed one,
 * `recovered` a run after one that crashed, `end` the task's end.
 */
const PHASES = ['queued', 'run', 'wait:person', 'wait:callback', 'wait:workflow', 'retry', 'recovered', 'end'] as const;

export type Phase = (typeof PHASES)[number];

/** `error.type` of a tool result with `isError` (the conventions' value). */
export const TOOL_ERROR = 'tool_error';
