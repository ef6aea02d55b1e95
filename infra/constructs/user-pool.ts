import { CfnOutput, Duration, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { AccountRecovery, FeaturePlan, Mfa, OAuthScope, ResourceServerScope, UserPool, type UserPoolClient } from 'aws-cdk-lib/aws-cognito';
import { Construct } from 'constructs';

/** Loopback callbacks of the project's CLI and of the MCP Inspector: the people client's, unless others are given. */
export const DEFAULT_CALLBACK_URLS = ['http://127.0.0.1:33418/callback', 'http://localhost:6274/oauth/callback'] as const;

export interface McpUserPoolProps {
  /** The Cognito hosted domain prefix (`<prefix>.auth.<region>.amazoncognito.com`); globally unique. */
  readonly domainPrefix: string;
  /** Where the authorization code client may be sent back (MCP clients' loopback or web callbacks). */
  readonly callbackUrls: string[];
  readonly removalPolicy: RemovalPolicy;
}

/** The resource server identifier in the pool: scopes are `mcp-tasks/<scope>`. */
const USER_POOL_RESOURCE_SERVER = 'mcp-tasks';
/** The one scope the pool defines for the endpoint. */
export const USER_POOL_SCOPE = `${USER_POOL_RESOURCE_SERVER}/tasks`;

/**
 * An authorization server for deployments without an identity provider: a
 * Cognito user pool with the endpoint as a resource server, an app client for
 * people (authorization code with PKCE, no secret) and one for scripts
 * (client credentials, with a secret kept by Cognito). Cognito offers no
 * dynamic client registration: MCP clients are configured with the client
 * id (see docs/authorization.md). Its access tokens carry `client_id` but no `aud`, so the
 * endpoint accepts them only from these two clients.
 */
export class McpUserPool extends Construct {
  readonly userPool: UserPool;
  readonly userClient: UserPoolClient;
  readonly serviceClient: UserPoolClient;
  /** The console's client, once {@link McpUserPool.addConsoleClient} made it. */
  consoleClient?: UserPoolClient;
  /** The token issuer (`https://cognito-idp.<region>.amazonaws.com/<pool id>`). */
  readonly issuer: string;

  constructor(scope: Construct, id: string, props: McpUserPoolProps) {
    super(scope, id);
    this.userPool = new UserPool(this, 'Pool', {
      selfSignUpEnabled: false,
      signInAliases: { email: true },
      passwordPolicy: { minLength: 12, requireDigits: true, requireLowercase: true, requireUppercase: true, requireSymbols: true },
      mfa: Mfa.OPTIONAL,
      mfaSecondFactor: { otp: true, sms: false },
      accountRecovery: AccountRecovery.EMAIL_ONLY,
      featurePlan: FeaturePlan.ESSENTIALS,
      removalPolicy: props.removalPolicy,
    });
    this.userPool.addDomain('Domain', { cognitoDomain: { domainPrefix: props.domainPrefix } });
    const tasks = new ResourceServerScope({ scopeName: 'tasks', scopeDescription: 'Create, read and cancel your MCP tasks' });
    const server = this.userPool.addResourceServer('ResourceServer', { identifier: USER_POOL_RESOURCE_SERVER, scopes: [tasks] });
    const taskScope = OAuthScope.resourceServer(server, tasks);

    this.userClient = this.userPool.addClient('UserClient', {
      generateSecret: false,
      oAuth: { flows: { authorizationCodeGrant: true }, scopes: [taskScope, OAuthScope.OPENID], callbackUrls: props.callbackUrls },
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(30),
      preventUserExistenceErrors: true,
    });
    this.serviceClient = this.userPool.addClient('ServiceClient', {
      generateSecret: true,
      oAuth: { flows: { clientCredentials: true }, scopes: [taskScope] },
      accessTokenValidity: Duration.hours(1),
    });
    this.issuer = `https://cognito-idp.${Stack.of(this).region}.amazonaws.com/${this.userPool.userPoolId}`;

    Validations.of(this.userPool).acknowledge(
      {
        id: 'AwsSolutions-COG2',
        reason:
          'MFA is offered (TOTP) but optional: this pool is a starting point for small teams; require it with `mfa: Mfa.REQUIRED` ' +
          'where policy demands.',
      },
      {
        id: 'AwsSolutions-COG8',
        reason:
          'The Essentials plan is enough for a starter pool (managed login, no self sign-up, strict password policy); Plus adds threat ' +
          'protection at a per-user price. Deployments that need it use an existing IdP or raise the plan.',
      },
    );

    new CfnOutput(this, 'Issuer', { value: this.issuer, description: 'Token issuer (the authorization server MCP clients discover)' });
    new CfnOutput(this, 'UserClientId', {
      value: this.userClient.userPoolClientId,
      description: 'Client id for people (authorization code + PKCE, no secret)',
    });
    new CfnOutput(this, 'ServiceClientId', {
      value: this.serviceClient.userPoolClientId,
      description: 'Client id for scripts (client credentials; the secret is in the Cognito console)',
    });
    new CfnOutput(this, 'Scope', { value: USER_POOL_SCOPE, description: 'The scope to request' });
  }

  /**
   * The console's app client: authorization code with PKCE, no secret (a
   * public client), the `openid` scope only (the console calls no API with
   * its tokens: it needs to know who signed in), sent back to `callbackUrl`
   * (the console's own, from the HTTP API's endpoint). The same pool gives
   * the console and the MCP clients the same subject for a person.
   */
  addConsoleClient(callbackUrl: string): UserPoolClient {
    this.consoleClient = this.userPool.addClient('ConsoleClient', {
      generateSecret: false,
      oAuth: { flows: { authorizationCodeGrant: true }, scopes: [OAuthScope.OPENID], callbackUrls: [callbackUrl] },
      idTokenValidity: Duration.hours(1),
      accessTokenValidity: Duration.hours(1),
      refreshTokenValidity: Duration.days(1),
      preventUserExistenceErrors: true,
    });
    return this.consoleClient;
  }
}
