/**
 * What a workflow tool declares of its workflow (`defineWorkflowTool` in
 * `tool.ts`): apart, so that the tool definition's type can name it without
 * importing the workflow runtime.
 */
export interface WorkflowDeclaration {
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

/** A workflow's ASL definition with `${ReceiverFunctionArn}` replaced by the receiver's ARN (the stack's, or the local one). */
export function withReceiver(definition: string, receiverArn: string): string {
  return definition.replace(/\$\{ReceiverFunctionArn\}/g, receiverArn);
}
