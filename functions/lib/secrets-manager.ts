import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/**
 * Reads a Secrets Manager secret's `SecretString`. Imported by path only from
 * `tool-settings.ts`, and only bundled when a served tool declares a secret
 * kept in Secrets Manager.
 */
export function secretsManagerFetcher(client: SecretsManagerClient = new SecretsManagerClient({})): (name: string) => Promise<string> {
  return async (name) => {
    const { SecretString } = await client.send(new GetSecretValueCommand({ SecretId: name }));
    if (SecretString === undefined) throw new Error(`Secret ${name} has no string value`);
    return SecretString;
  };
}
