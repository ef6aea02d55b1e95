/**
 * What the local stack keeps in its data directory besides the table: the
 * lock that makes it the directory's one user, the `requestState` key, and
 * the outputs file the operator commands read.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LOCAL_OUTPUTS, OPS_OUTPUTS } from '../../infra/outputs.ts';
import { REGION } from './emulators.ts';
import type { LocalSqs } from './sqs.ts';
import { STEP_FUNCTIONS_ENDPOINT_OUTPUT } from './workflows.ts';

/**
 * Claims the data directory for this process. LevelDB allows one opener, and
 * dynalite turns a second one into an uncaught "Database is closed" on the
 * first request; this says what is wrong instead. Resolves to the release.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const file = join(dataDir, 'local-stack.pid');
  const holder = Number(await readFile(file, 'utf8').catch(() => ''));
  if (holder && holder !== process.pid && isRunning(holder)) {
    throw new Error(`${dataDir} is in use by another local stack (pid ${holder}); stop it or set LOCAL_DATA_DIR`);
  }
  await writeFile(file, String(process.pid));
  return () => rm(file, { force: true });
}

/**
 * The local stack's secret: 32 random bytes in `<dataDir>/request-state.key`
 * (mode 0600; the file keeps the name it was first made with, so a data
 * directory keeps its secret), made on first start and kept across restarts
 * so answers, sessions and callback URLs in flight survive them. Delete the
 * file to rotate it.
 */
export function localStackSecret(dataDir: string): () => Promise<Uint8Array> {
  const file = join(dataDir, 'request-state.key');
  let key: Promise<Uint8Array> | undefined;
  return () =>
    (key ??= (async () => {
      try {
        await writeFile(file, randomBytes(32), { flag: 'wx', mode: 0o600 });
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      return readFile(file);
    })());
}

/** What the outputs file names: the stack's table and queues, and the endpoints of the emulators and of the stack. */
export interface LocalOutputs {
  tableName: string;
  activeIndexShards: number;
  sqs: Pick<LocalSqs, 'queueUrl' | 'dlqUrl'>;
  endpoints: { dynamodb: string; sqs: string };
  mcpEndpointUrl: string;
  /** The Step Functions emulator's, when the stack runs workflow tools. */
  stepFunctionsEndpoint?: string;
}

/**
 * Writes `<dataDir>/outputs.json`. The operator commands find the local stack
 * as they find a deployed one: by its outputs (`npm run ops -- --outputs
 * <dataDir>/outputs.json …`), plus the emulators' endpoints. Resolves to the
 * file's removal.
 */
export async function writeOutputs(dataDir: string, outputs: LocalOutputs): Promise<() => Promise<void>> {
  const outputsFile = join(dataDir, 'outputs.json');
  await writeFile(
    outputsFile,
    JSON.stringify(
      {
        local: {
          [OPS_OUTPUTS.tableName]: outputs.tableName,
          [OPS_OUTPUTS.queueUrl]: outputs.sqs.queueUrl,
          [OPS_OUTPUTS.deadLetterQueueUrl]: outputs.sqs.dlqUrl,
          [OPS_OUTPUTS.activeIndexShards]: String(outputs.activeIndexShards),
          [LOCAL_OUTPUTS.dynamodbEndpoint]: outputs.endpoints.dynamodb,
          [LOCAL_OUTPUTS.sqsEndpoint]: outputs.endpoints.sqs,
          [LOCAL_OUTPUTS.region]: REGION,
          McpEndpointUrl: outputs.mcpEndpointUrl,
          ...(outputs.stepFunctionsEndpoint ? { [STEP_FUNCTIONS_ENDPOINT_OUTPUT]: outputs.stepFunctionsEndpoint } : {}),
        },
      },
      null,
      2,
    ),
  );
  return () => rm(outputsFile, { force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
