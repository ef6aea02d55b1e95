import { Annotations, CfnOutput, Duration, type RemovalPolicy, Validations } from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { CorsHttpMethod, HttpApi, HttpMethod, type HttpRoute, type HttpStage, LogGroupLogDestination } from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, type RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

/** Who may call the endpoint: callers presenting a JWT from `issuer` for one of `audience`. */
export interface JwtSettings {
  /** The token issuer URL (e.g. `https://cognito-idp.<region>.amazonaws.com/<pool id>`). */
  readonly issuer: string;
  readonly audience: string[];
}

export interface ApiThrottle {
  /** Steady-state requests per second for the whole stage. */
  readonly rateLimit: number;
  readonly burstLimit: number;
}

export interface ApiProps {
  /** The MCP function behind `POST /mcp`. */
  readonly handler: IFunction;
  /**
   * The console function behind `/console` and `/console/{proxy+}` (any
   * method), without an authorizer: its pages are for browsers, which carry
   * a session cookie, not a bearer token; the function signs people in itself.
   * @default none: no `/console` routes
   */
  readonly console?: IFunction;
  /**
   * The callbacks function behind `POST /callbacks/{token}`, without an
   * authorizer: the sealed token in the path is the capability (an outside
   * system holds no principal's token).
   * @default none: no `/callbacks` route
   */
  readonly callbacks?: IFunction;
  /**
   * An HTTP API JWT authorizer on `POST /mcp`. With {@link ApiProps.resourceServer}
   * it is only a pre-filter (its 401 carries no `resource_metadata`, so
   * clients cannot discover the authorization server from it).
   * @default none: the function decides alone
   */
  readonly jwt?: JwtSettings;
  /**
   * The function is an OAuth resource server (it verifies tokens and answers
   * challenges itself): the Protected Resource Metadata routes are added, to
   * the same function, unauthenticated. Describes the authorization for the outputs.
   * @default none: an open endpoint
   */
  readonly resourceServer?: { readonly issuers: string[] };
  readonly throttle: ApiThrottle;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Origins whose browser pages may call the endpoint: the HTTP API answers
   * their CORS preflight and adds the CORS headers; the MCP function refuses
   * any other `Origin` with 403 (the same list, `TASKS_ALLOWED_ORIGINS`).
   * @default `[]`: no browser origin
   */
  readonly allowedOrigins?: string[];
  /**
   * The `Mcp-Param-*` headers the tools' `x-mcp-header` parameters are sent in: allowed in CORS with the others.
   * @default `[]`: none
   */
  readonly paramHeaders?: readonly string[];
}

/** Request headers an MCP client sends (Streamable HTTP, 2026-07-28). */
const MCP_REQUEST_HEADERS = [
  'authorization',
  'content-type',
  'accept',
  'mcp-protocol-version',
  'mcp-method',
  'mcp-name',
  'mcp-session-id',
  'last-event-id',
];

/** The path MCP clients call. */
const MCP_PATH = '/mcp';

/** The console's routes: its front page and everything under it. */
export const CONSOLE_PATHS = ['/console', '/console/{proxy+}'] as const;

/** The completion endpoint's route (the access log shows this route key, never the path with its token). */
const CALLBACK_PATH = '/callbacks/{token}';

/** Where RFC 9728 puts the metadata of the resource at {@link MCP_PATH}, and the root fallback. */
export const METADATA_PATHS = ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource'] as const;

/** Warning id of the open-endpoint annotation (also how a test finds it). */
export const OPEN_ENDPOINT_WARNING = 'mcp-tasks:open-endpoint';

/**
 * The HTTP API in front of the MCP function: one route, `POST /mcp`, on the
 * `$default` stage with stage-wide throttling and JSON access logs.
 *
 * An HTTP API buffers each response (no streaming): the MCP endpoint answers
 * in JSON, and clients poll tasks instead of holding a stream open.
 */
export class Api extends Construct {
  readonly httpApi: HttpApi;
  readonly stage: HttpStage;
  readonly accessLogs: LogGroup;
  /** The URL to configure in an MCP client. */
  readonly endpointUrl: string;

  constructor(scope: Construct, id: string, props: ApiProps) {
    super(scope, id);
    this.httpApi = new HttpApi(this, 'HttpApi', {
      description: 'MCP server with the Tasks extension',
      createDefaultStage: false,
      ...(props.allowedOrigins?.length
        ? {
            corsPreflight: {
              allowOrigins: props.allowedOrigins,
              // GET: browser-based clients read the OAuth metadata documents too.
              allowMethods: props.resourceServer ? [CorsHttpMethod.POST, CorsHttpMethod.GET] : [CorsHttpMethod.POST],
              allowHeaders: [...MCP_REQUEST_HEADERS, ...new Set(props.paramHeaders?.map((header) => header.toLowerCase()))],
              exposeHeaders: ['mcp-session-id', 'www-authenticate'],
              maxAge: Duration.hours(1),
            },
          }
        : {}),
    });
    this.accessLogs = new LogGroup(this, 'AccessLogs', { retention: props.logRetention, removalPolicy: props.removalPolicy });
    this.stage = this.#stage(props.throttle);
    const route = this.#mcpRoutes(props);
    if (props.console) this.#consoleRoutes(props.console);
    if (props.callbacks) this.#callbackRoute(props.callbacks);
    this.endpointUrl = `${this.httpApi.apiEndpoint}${MCP_PATH}`;
    new CfnOutput(this, 'McpEndpointUrl', { value: this.endpointUrl, description: 'The URL MCP clients call (POST, Streamable HTTP)' });
    this.#authentication(props, route);
  }

  /** The `$default` stage: stage-wide throttling and JSON access logs. */
  #stage(throttle: ApiThrottle): HttpStage {
    return this.httpApi.addStage('DefaultStage', {
      stageName: '$default',
      autoDeploy: true,
      throttle,
      accessLogSettings: {
        destination: new LogGroupLogDestination(this.accessLogs),
        // Who called what, when, and how it went; never headers or bodies
        // (tokens, tool arguments). `sub` is the caller's identity when a JWT
        // authorizer is configured.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            requestTime: '$context.requestTime',
            sourceIp: '$context.identity.sourceIp',
            method: '$context.httpMethod',
            routeKey: '$context.routeKey',
            status: '$context.status',
            protocol: '$context.protocol',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            authorizerError: '$context.authorizer.error',
            sub: '$context.authorizer.claims.sub',
          }),
        ),
      },
    });
  }

  /** `POST /mcp` (behind the JWT authorizer, if any) and, for a resource server, the metadata routes; returns the MCP route. */
  #mcpRoutes(props: ApiProps): HttpRoute | undefined {
    const authorizer = props.jwt
      ? new HttpJwtAuthorizer('JwtAuthorizer', props.jwt.issuer, { jwtAudience: props.jwt.audience })
      : undefined;
    const integration = new HttpLambdaIntegration('McpIntegration', props.handler);
    const [route] = this.httpApi.addRoutes({
      path: MCP_PATH,
      methods: [HttpMethod.POST],
      integration,
      ...(authorizer ? { authorizer } : {}),
    });
    if (!props.resourceServer) return route;
    for (const path of METADATA_PATHS) {
      for (const metadataRoute of this.httpApi.addRoutes({ path, methods: [HttpMethod.GET], integration })) {
        Validations.of(metadataRoute).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'RFC 9728 Protected Resource Metadata is public by definition: clients read it before they have a token, to find the ' +
            'authorization server.',
        });
      }
    }
    if (route && !authorizer) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'The MCP function is the OAuth resource server: it verifies every token (issuer, signature, audience, scopes) and answers ' +
          '401/403 with the WWW-Authenticate challenge MCP clients need, which an HTTP API authorizer cannot produce.',
      });
    }
    return route;
  }

  /** Says how the endpoint is protected (the `Authentication` output), and warns loudly when it is open. */
  #authentication(props: ApiProps, route: HttpRoute | undefined): void {
    if (props.resourceServer) {
      new CfnOutput(this, 'Authentication', {
        value:
          `OAuth resource server: tokens from ${props.resourceServer.issuers.join(', ')} for this ` +
          `endpoint${props.jwt ? ' (API Gateway JWT pre-filter on)' : ''}`,
        description: 'Whether the endpoint requires a token',
      });
      new CfnOutput(this, 'ProtectedResourceMetadataUrl', {
        value: `${this.httpApi.apiEndpoint}${METADATA_PATHS[0]}`,
        description: 'RFC 9728 metadata: where clients discover the authorization server',
      });
    } else if (!props.jwt) {
      const message =
        'The MCP endpoint is OPEN: no JWT authorizer is configured, so anyone who knows the URL can create and read tasks, all under ' +
        'one shared principal. ' +
        'Give it an issuer to make it an OAuth resource server: McpTasks `auth` or `cognito` (in this repository, deploy with ' +
        '`-c authIssuer=<issuer URL>` or `-c cognito=true`).';
      Annotations.of(this).addWarningV2(OPEN_ENDPOINT_WARNING, message);
      new CfnOutput(this, 'Authentication', { value: `OPEN - ${message}`, description: 'Whether the endpoint requires a token' });
      if (route) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'No JWT issuer/audience was given, so the route has no authorizer by explicit choice; synth warns loudly and the stack ' +
            'outputs say the endpoint is OPEN. Setting jwtIssuer and jwtAudience adds the authorizer.',
        });
      }
    } else {
      new CfnOutput(this, 'Authentication', {
        value: `JWT from ${props.jwt.issuer} for ${props.jwt.audience.join(', ')}`,
        description: 'Whether the endpoint requires a token',
      });
    }
  }

  #callbackRoute(handler: IFunction): void {
    const integration = new HttpLambdaIntegration('CallbacksIntegration', handler);
    // POST completes; ANY reaches the function too, so another method is answered 405 with `Allow: POST`, not the API's 404.
    for (const route of this.httpApi.addRoutes({ path: CALLBACK_PATH, methods: [HttpMethod.POST, HttpMethod.ANY], integration })) {
      Validations.of(route).acknowledge({
        id: 'AwsSolutions-APIG4',
        reason:
          'Outside systems complete a callback with the URL they were handed: its token (AES-256-GCM under a key derived for this ' +
          'purpose only) binds the task, the callback and an expiry, and is the whole capability, as a Step Functions task token is. ' +
          'A JWT authorizer would need the outside system to hold a principal it does not have.',
      });
    }
  }

  #consoleRoutes(handler: IFunction): void {
    const integration = new HttpLambdaIntegration('ConsoleIntegration', handler);
    for (const path of CONSOLE_PATHS) {
      for (const route of this.httpApi.addRoutes({ path, methods: [HttpMethod.ANY], integration })) {
        Validations.of(route).acknowledge({
          id: 'AwsSolutions-APIG4',
          reason:
            'The console serves browsers, which carry a session cookie rather than a bearer token: the console function signs people ' +
            'in itself (OAuth authorization code + PKCE at the issuer) and checks the sealed session, the origin and the form token on ' +
            "every request; an open endpoint's console shows tasks by id only unless the operator opens it.",
        });
      }
    }
  }
}
