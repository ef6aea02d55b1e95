/**
 * What a workflow tool declares of its workflow, and `defineWorkflowTool`
 * (exported by `#tool`): apart from the runtime, so that the tool
 * definition's type can name the declaration without importing it.
 */
import type * as z from 'zod';
import type { EngineDeclaration } from '../engines/port.ts';

/** A Step Functions tool's declaration kind: the engine's port fields and the ASL file it names. */
export interface WorkflowDeclaration extends EngineDeclaration {
  /** Step Functions (the default: absent means it). */
  engine?: 'stepfunctions';
  /** The workflow's name, as the task's status says it ("Running deploy-release"): no ARN is ever shown. */
  name: string;
  /**
   * Its Amazon States Language definition: a JSON file, relative to the
   * project's root, in which `${ReceiverFunctionArn}` stands for the receiver
   * of its questions and progress. The stack and the local emulator both load it.
   */
  definition: string;
  /** How the execution's output reads as text (default: its JSON, cut at 2,000 characters). */
  text?: (output: unknown) => string;
}

/**
 * Declares a workflow tool: a `task` tool whose run is an execution of the
 * state machine bound to it (`TASKS_WORKFLOWS`), its handler supplied by the
 * engine (`bindWorkflows`, `shared/workflows/tool.ts`). Its input is the
 * arguments as canonical JSON; the machine reads `$$.Execution.Name` for the
 * task. Any other field of a tool definition may be given (title, scopes,
 * version, fallback, …), but not `execution` or `handler`.
 */
export function defineWorkflowTool<
  S extends z.ZodType<Record<string, unknown>>,
  D extends { name: string; inputSchema: S; workflow: WorkflowDeclaration },
>(
  tool: D & { execution?: never; handler?: never },
): D & { execution: 'task'; handler: (args: Record<string, unknown>, ctx: unknown) => Promise<never> } {
  const handler = () => Promise.reject(new Error(`Tool "${tool.name}" runs a workflow, but no workflow engine is bound to the catalogue`));
  return { ...tool, execution: 'task', handler };
}
