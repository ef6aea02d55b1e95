/**
 * A task-token state's token on the task row: a secret (whoever holds it can
 * answer the state), so it is sealed (AES-256-GCM) under a key of its own
 * purpose (`workflow-task-token`, `keys.ts`), bound to its task (a token
 * sealed for one task does not open on another's row). It is never logged,
 * shown or put in an event; the question it belongs to is named by a digest
 * of it, which tells a repeated invocation of the same state apart from a new
 * one (each entry into a task-token state gets a fresh token).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import type { CallbackKeys as TokenKeys } from '../callback-tokens.ts';

const IV_BYTES = 12;
const TAG_BYTES = 16;

function aad(taskId: string): Buffer {
  return Buffer.from(`mcp-tasks-serverless/workflow-task-token/v1\u0000${taskId}`);
}

/** The token sealed for task `taskId`'s row. */
export async function sealTaskToken(keys: TokenKeys, taskId: string, token: string): Promise<string> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', await keys('workflow-task-token'), iv).setAAD(aad(taskId));
  const sealed = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/** The token a row holds for task `taskId`; throws when it was not sealed for it under this purpose (a corrupted or moved row). */
export async function unsealTaskToken(keys: TokenKeys, taskId: string, sealed: string): Promise<string> {
  const bytes = Buffer.from(sealed, 'base64url');
  if (bytes.length <= IV_BYTES + TAG_BYTES) throw new Error('A sealed task token is too short');
  const decipher = createDecipheriv('aes-256-gcm', await keys('workflow-task-token'), bytes.subarray(0, IV_BYTES)).setAAD(aad(taskId));
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
}

/** The id of the question a token belongs to: a digest of the token (not a secret: it opens nothing). */
export function questionIdOf(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('base64url').slice(0, 22);
}
