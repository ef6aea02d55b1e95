import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { MIN_SECRET_BYTES } from '../../shared/keys.ts';

/**
 * The stack's secret (it seals `requestState`; every purpose's key derives
 * from it) from an SSM SecureString (standard tier, encrypted with the
 * AWS-managed `aws/ssm` key), base64-encoded. Read once per execution
 * environment, on first use: a rotated secret reaches each
 * environment when it next starts (see docs/security.md on rotation).
 */
export function ssmStackSecret(parameterName: string, client: SSMClient = new SSMClient({})): () => Promise<Uint8Array> {
  let key: Promise<Uint8Array> | undefined;
  return () =>
    (key ??= client.send(new GetParameterCommand({ Name: parameterName, WithDecryption: true })).then(({ Parameter }) => {
      const bytes = Buffer.from(Parameter?.Value ?? '', 'base64');
      if (bytes.length < MIN_SECRET_BYTES)
        throw new Error(`The parameter ${parameterName} must hold at least ${MIN_SECRET_BYTES} bytes, base64-encoded`);
      return bytes;
    })).catch((error: unknown) => {
      key = undefined; // a failed read is tried again by the next request
      throw error;
    });
}
