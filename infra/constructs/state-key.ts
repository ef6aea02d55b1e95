import { Arn, CustomResource, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PARAMETER_NAME_PROPERTY } from '../../functions/state-key/app.ts';
import type { FunctionCode } from './function-code.ts';
import { TaskFunction } from './task-function.ts';

export interface StateKeyProps {
  /** Where the functions' code is (`function-code.ts`). */
  readonly code: FunctionCode;
  readonly logRetention: RetentionDays;
  readonly removalPolicy: RemovalPolicy;
  /**
   * Active X-Ray tracing, as the stack's other functions.
   * @default `false`
   */
  readonly tracing?: boolean;
}

/**
 * The key that seals `requestState`: an SSM SecureString in the standard
 * tier (no charge) encrypted with the AWS-managed `aws/ssm` key, created by
 * a custom resource with 32 random bytes so the value exists nowhere else.
 * The MCP function reads it once per execution environment. Rotation: put
 * a new value into the parameter; environments pick it up as they start,
 * and a `requestState` sealed with the old key is refused (the client
 * starts that call over).
 */
export class StateKey extends Construct {
  /** The parameter's name (`/<stack name>/request-state-key`). */
  readonly parameterName: string;
  readonly parameterArn: string;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: StateKeyProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.parameterName = `/${stack.stackName}/request-state-key`;
    this.parameterArn = Arn.format({ service: 'ssm', resource: 'parameter', resourceName: this.parameterName.slice(1) }, stack);

    const creator = new TaskFunction(this, 'Creator', {
      entry: 'stateKey',
      code: props.code,
      description: 'MCP tasks: creates the requestState sealing key (custom resource)',
      memorySize: 256,
      timeout: Duration.seconds(30),
      environment: {},
      logRetention: props.logRetention,
      removalPolicy: props.removalPolicy,
      ...(props.tracing ? { tracing: true } : {}),
    });
    creator.role.addToPolicy(new PolicyStatement({ actions: ['ssm:PutParameter', 'ssm:DeleteParameter'], resources: [this.parameterArn] }));
    this.resource = new CustomResource(this, 'Resource', {
      serviceToken: creator.function.functionArn,
      resourceType: 'Custom::RequestStateKey',
      properties: { [PARAMETER_NAME_PROPERTY]: this.parameterName },
    });
  }

  /** Read access to the key (the AWS-managed key needs no KMS grant). */
  grantRead(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['ssm:GetParameter'], resources: [this.parameterArn] }));
  }
}
