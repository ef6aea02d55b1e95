/**
 * SigV4 for X-Ray's OTLP endpoint (`https://xray.<region>.amazonaws.com/v1/traces`,
 * service `xray`): the function's own credentials, from the environment
 * Lambda sets, signed with the SDK's signer (already in every bundle's
 * dependencies) and Node's SHA-256.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import type { RequestSigner } from './exporter.ts';

/** X-Ray's OTLP traces endpoint in `region`. */
export function xrayTracesUrl(region: string): string {
  return `https://xray.${region}.amazonaws.com/v1/traces`;
}

/** Signs with the credentials in `env` (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`), read at each signature. */
export function sigV4Signer(region: string, env: Record<string, string | undefined> = process.env): RequestSigner {
  const signer = new SignatureV4({
    service: 'xray',
    region,
    sha256: Sha256,
    credentials: async () => {
      const accessKeyId = env['AWS_ACCESS_KEY_ID'];
      const secretAccessKey = env['AWS_SECRET_ACCESS_KEY'];
      if (!accessKeyId || !secretAccessKey) throw new Error('X-Ray export: no AWS credentials in the environment');
      const sessionToken = env['AWS_SESSION_TOKEN'];
      return { accessKeyId, secretAccessKey, ...(sessionToken ? { sessionToken } : {}) };
    },
  });
  return async ({ url, headers, body }) => {
    const signed = await signer.sign({
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      query: {},
      headers: { ...headers, host: url.host },
      body,
    });
    const { host: _host, ...rest } = signed.headers as Record<string, string>;
    return rest;
  };
}

/** The checksum the signer wants (`@aws-crypto/sha256-js`'s shape) over `node:crypto`. */
class Sha256 {
  #hash: Hash | Hmac;

  constructor(private readonly secret?: string | ArrayBuffer | ArrayBufferView) {
    this.#hash = this.#fresh();
  }

  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.#hash.update(typeof data === 'string' ? data : bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }

  reset(): void {
    this.#hash = this.#fresh();
  }

  #fresh(): Hash | Hmac {
    const { secret } = this;
    return secret === undefined ? createHash('sha256') : createHmac('sha256', typeof secret === 'string' ? secret : bytesOf(secret));
  }
}

function bytesOf(data: ArrayBuffer | ArrayBufferView): Uint8Array {
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}
