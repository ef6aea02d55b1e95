import type { ServerContext } from '@modelcontextprotocol/server';
import type { ProgressAmount } from '../runtime/tool.ts';

/**
 * Progress of a tool answered inside the request: when the `tools/call`
 * carries `_meta.progressToken`, each `ctx.progress(…)` becomes a
 * `notifications/progress` for that token, sent before the result. The SDK
 * then answers the request as an SSE stream (the endpoint's `auto` response
 * mode); API Gateway and the Lambda adapter buffer it whole, so the client
 * gets the notifications and the result together, in order. Without a token
 * nothing is sent and the answer stays a JSON body.
 *
 * `progress` is the tool's own figure when it gives one, otherwise a count
 * of the reports so far (the protocol only asks that it increase).
 */
export function inlineProgress(ctx: ServerContext): (message: string, amount?: ProgressAmount) => Promise<void> {
  const token = (ctx.mcpReq._meta as Record<string, unknown> | undefined)?.['progressToken'];
  if (typeof token !== 'string' && typeof token !== 'number') return async () => {};
  let reports = 0;
  return async (message, amount) => {
    reports++;
    await ctx.mcpReq.notify({
      method: 'notifications/progress',
      params: {
        progressToken: token,
        progress: amount?.progress ?? reports,
        ...(amount?.total === undefined ? {} : { total: amount.total }),
        message,
      },
    });
  };
}
