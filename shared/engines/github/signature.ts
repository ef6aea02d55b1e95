/**
 * A webhook delivery's signature (`X-Hub-Signature-256`: `sha256=` and the
 * hex HMAC-SHA256 of the raw body under the webhook's secret), checked over
 * the bytes as they arrived, in constant time, before anything is parsed.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'sha256=';
/** A SHA-256 HMAC in hex. */
const HEX_CHARS = 64;

/** Whether `header` is the signature of `body` under `secret`. A missing or malformed header is not. */
export function validSignature(secret: string, body: Uint8Array, header: string | undefined): boolean {
  if (header === undefined || !header.startsWith(PREFIX)) return false;
  const given = header.slice(PREFIX.length);
  if (given.length !== HEX_CHARS || !/^[0-9a-f]+$/i.test(given)) return false;
  const expected = createHmac('sha256', secret).update(body).digest();
  return timingSafeEqual(Buffer.from(given, 'hex'), expected);
}

/** The `X-Hub-Signature-256` header GitHub sends for `body` (the local `curl` and the tests sign with it). */
export function signatureOf(secret: string, body: Uint8Array | string): string {
  return `${PREFIX}${createHmac('sha256', secret).update(body).digest('hex')}`;
}
