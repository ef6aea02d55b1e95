/**
 * Waits `ms` in this process, or rejects with the signal's reason as soon as
 * it aborts: the one abortable wait, for tools, the server and the CLI. Not
 * to be mistaken for a tool's `ctx.sleep`, which is durable (the invocation
 * ends and the task is woken later).
 */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
