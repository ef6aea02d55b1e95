import { ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import { runTool } from '../runtime/run.ts';
import type { ToolDefinition } from '../runtime/tool.ts';
import { checkAnswers } from '../tasks/limits.ts';
import type { ClientCapabilities } from '../tasks/model.ts';
import { INTERNAL_ERROR } from '../wire.ts';
import { inlineProgress } from './progress.ts';
import type { RequestStateSealer, SealedState } from './request-state.ts';

/** Who makes a call, declaring what: what an inline run reads of the request. */
export interface InlineCaller {
  ctx: ServerContext;
  principal: string;
  capabilities: ClientCapabilities;
}

/** An inline run's answer: the result to send, and every answer the run had (for a task `prepare` gathered input for). */
export interface InlineOutcome {
  result: Record<string, unknown>;
  answers: Record<string, unknown>;
}

/**
 * Runs a tool inside the request, within the synchronous budget. Elicitation
 * goes through multi-round-trip requests: the answers of earlier rounds and
 * the keys asked so far travel in `requestState`, sealed (HMAC) and bound to
 * the principal, the tool and an expiry, so a client can neither forge
 * answers it was never asked for nor skip a question. Tampered or expired
 * state is refused (`-32602`); answers to keys that were never issued are
 * ignored.
 */
export class InlineRunner {
  constructor(
    private readonly sealer: RequestStateSealer,
    private readonly syncBudgetMs: number,
  ) {}

  async run(tool: ToolDefinition, args: Record<string, unknown>, { ctx, capabilities, principal }: InlineCaller): Promise<InlineOutcome> {
    const binding = { principal, tool: tool.name };
    const state: SealedState = await this.sealer.open(ctx.mcpReq.requestState<unknown>(), binding);
    const incoming = ctx.mcpReq.inputResponses ?? {};
    checkAnswers(incoming);
    const issued = new Set(state.issuedKeys);
    const fresh = Object.fromEntries(Object.entries(incoming).filter(([key]) => issued.has(key)));
    const answers = { ...state.answers, ...fresh };
    checkAnswers(answers);
    const signal = AbortSignal.any([ctx.mcpReq.signal, AbortSignal.timeout(this.syncBudgetMs)]);
    const outcome = await runTool(tool, args, {
      taskId: undefined,
      clientCapabilities: capabilities,
      answers,
      cancel: signal,
      progress: inlineProgress(ctx),
    });
    switch (outcome.kind) {
      case 'result':
        return { result: outcome.result as Record<string, unknown>, answers };
      case 'protocol-error':
        throw ProtocolError.fromError(outcome.error.code, outcome.error.message, outcome.error.data);
      case 'input': {
        const issuedKeys = [...new Set([...state.issuedKeys, ...Object.keys(outcome.inputRequests)])];
        const requestState = await this.sealer.seal({ answers, issuedKeys }, binding);
        return { result: { resultType: 'input_required', inputRequests: outcome.inputRequests, requestState }, answers };
      }
      case 'cancelled':
        throw new ProtocolError(INTERNAL_ERROR, 'The tool did not finish within the synchronous time budget; call it as a task');
      case 'retry':
        throw new ProtocolError(INTERNAL_ERROR, 'The tool failed transiently; try again');
      case 'sleep':
      case 'continue':
      case 'callbacks':
        // Without a journal steps run directly and sleeps wait in-process, and a callback is a tool error: none suspends.
        throw new Error(`Inline run suspended as ${outcome.kind}`);
    }
  }

  /**
   * Input the tool wants before it becomes a task is gathered synchronously
   * (spec item 13); the answers are recorded on the task for its handler.
   */
  gather(
    tool: ToolDefinition,
    prepare: NonNullable<ToolDefinition['prepare']>,
    args: Record<string, unknown>,
    caller: InlineCaller,
  ): Promise<InlineOutcome> {
    const handler: ToolDefinition['handler'] = async (a, c) => {
      await prepare(a, c);
      return '';
    };
    return this.run({ ...tool, handler }, args, caller);
  }
}
