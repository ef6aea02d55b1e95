/**
 * A callback's token: the capability its URL carries. It names the task and
 * the callback and when it expires, sealed (AES-256-GCM, authenticated) under
 * the key derived for this purpose only (`callback-token`, `keys.ts`), so it
 * cannot be forged, altered or taken for any other sealed value. It is never
 * stored: the worker derives it when it hands the URL to the tool's submit
 * function (each derivation differs; any of them is valid), and the
 * completion endpoint unseals it.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { KeyPurpose } from './keys.ts';

/** What a token grants: completing callback `callbackId` of task `taskId` until `expiresAt` (epoch ms). */
export interface CallbackGrant {
  taskId: string;
  callbackId: string;
  expiresAt: number;
}

/** The keys per purpose (`purposeKeys` in `keys.ts`). */
export type CallbackKeys = (purpose: KeyPurpose) => Promise<Uint8Array>;

const AAD = Buffer.from('mcp-tasks-serverless/callback-token/v1');
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** The longest token accepted: anything longer is refused before any work. */
const MAX_TOKEN_LENGTH = 1024;

export async function sealCallback(keys: CallbackKeys, grant: CallbackGrant): Promise<string> {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', await keys('callback-token'), iv).setAAD(AAD);
  const payload = JSON.stringify([grant.taskId, grant.callbackId, grant.expiresAt]);
  const sealed = Buffer.concat([cipher.update(payload, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, sealed, cipher.getAuthTag()]).toString('base64url');
}

/**
 * The grant a token carries, whether expired or not (the caller tells an
 * expired grant from a live one); `undefined` for anything we did not seal
 * under this purpose's key (malformed, altered, forged, another key's) and
 * for a token of ours spelled otherwise than sealed (padding, a last
 * character's unused bits set): a token has one spelling.
 */
export async function unsealCallback(keys: CallbackKeys, token: string): Promise<CallbackGrant | undefined> {
  if (token.length > MAX_TOKEN_LENGTH || !/^[A-Za-z0-9_-]+$/.test(token)) return undefined;
  const bytes = Buffer.from(token, 'base64url');
  // One spelling per token: the decoder ignores a last character's unused bits, so another
  // spelling of the same bytes would be a second URL for one capability.
  if (bytes.length <= IV_BYTES + TAG_BYTES || bytes.toString('base64url') !== token) return undefined;
  const decipher = createDecipheriv('aes-256-gcm', await keys('callback-token'), bytes.subarray(0, IV_BYTES)).setAAD(AAD);
  decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
  let text: string;
  try {
    text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    return undefined; // not authentic: a token we did not seal is no grant (and no error of ours)
  }
  const parts: unknown = JSON.parse(text);
  if (!Array.isArray(parts) || typeof parts[0] !== 'string' || typeof parts[1] !== 'string' || typeof parts[2] !== 'number')
    return undefined;
  return { taskId: parts[0], callbackId: parts[1], expiresAt: parts[2] };
}
