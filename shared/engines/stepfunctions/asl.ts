/**
 * What a Step Functions tool's declaration names, an Amazon States Language
 * file, as the stack and the local emulator both load it: its substitutions.
 *
 * No AWS SDK in here.
 */

/** A workflow's ASL definition with `${ReceiverFunctionArn}` replaced by the receiver's ARN (the stack's, or the local one). */
export function withReceiver(definition: string, receiverArn: string): string {
  return definition.replace(/\$\{ReceiverFunctionArn\}/g, receiverArn);
}
