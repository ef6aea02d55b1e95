// One Lambda execution environment: loads a function's bundle from its asset
// directory the way the Node.js runtime does (`Handler: index.handler` → the
// `handler` export of `index.mjs`, the asset as the working directory), then
// runs invocations the parent sends over IPC, one at a time, with a Lambda
// context whose deadline is the function's timeout. Plain JavaScript: it runs
// on the project's Node 22 without a loader, as the bundle itself does.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [assetDir, handlerSpec, timeoutSeconds] = process.argv.slice(2);
const send = (message) => process.send?.(message);
const describe = (error) => ({
  errorType: error?.name ?? 'Error',
  errorMessage: error instanceof Error ? error.message : String(error),
});

async function load() {
  const dot = handlerSpec.lastIndexOf('.');
  const file = handlerSpec.slice(0, dot);
  const name = handlerSpec.slice(dot + 1);
  const path = ['.mjs', '.js', '.cjs'].map((ext) => join(assetDir, file + ext)).find((candidate) => existsSync(candidate));
  if (!path) throw Object.assign(new Error(`Cannot find module '${file}'`), { name: 'Runtime.ImportModuleError' });
  const module = await import(pathToFileURL(path).href);
  const handler = module[name];
  if (typeof handler !== 'function') {
    throw Object.assign(new Error(`${handlerSpec} is undefined or not exported`), { name: 'Runtime.HandlerNotFound' });
  }
  return handler;
}

process.chdir(assetDir);
let handler;
let initError;
try {
  handler = await load();
  send({ type: 'ready' });
} catch (error) {
  initError = describe(error);
  send({ type: 'init-error', error: initError });
}

// The parent is gone (it ended or crashed): an execution environment never outlives its lane.
process.on('disconnect', () => process.exit(0));

let queue = Promise.resolve();
process.on('message', (message) => {
  if (message?.type !== 'invoke') return;
  queue = queue.then(() => invoke(message));
});

async function invoke({ id, event, requestId, functionArn }) {
  if (initError) return send({ type: 'result', id, error: initError });
  const deadline = Date.now() + Number(timeoutSeconds) * 1000;
  const context = {
    awsRequestId: requestId,
    functionName: process.env.AWS_LAMBDA_FUNCTION_NAME,
    functionVersion: '$LATEST',
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    invokedFunctionArn: functionArn,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(
      () => reject(Object.assign(new Error(`Task timed out after ${timeoutSeconds} seconds`), { name: 'Sandbox.Timedout' })),
      deadline - Date.now(),
    );
  });
  try {
    const result = await Promise.race([handler(event, context), timeout]);
    send({ type: 'result', id, result: result === undefined ? null : result });
  } catch (error) {
    send({ type: 'result', id, error: describe(error) });
  } finally {
    clearTimeout(timer);
  }
}
