import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';

/**
 * Reads SSM Parameter Store parameters (a `SecureString` decrypted when
 * `decrypt`). Imported by path only from `tool-settings.ts`, and only bundled
 * when a served tool declares an SSM parameter.
 */
export function ssmParameterFetcher(client: SSMClient = new SSMClient({})): (name: string, decrypt: boolean) => Promise<string> {
  return async (name, decrypt) => {
    const { Parameter } = await client.send(new GetParameterCommand({ Name: name, WithDecryption: decrypt }));
    if (Parameter?.Value === undefined) throw new Error(`SSM parameter ${name} has no value`);
    return Parameter.Value;
  };
}
