import { Arn, CustomResource, Duration, type RemovalPolicy, Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { PARAMETER_NAME_PROPERTY } from '../../functions/stack-secret/app.ts';
import type { FunctionCode } from './function-code.ts';
import { TaskFunction } from './task-function.ts';

export interface StackSecretProps {
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
 * The stack's secret: it seals `requestState`, and every purpose's key (the
 * console's cookies, callback tokens, repeat-call ids) is derived from it
 * (`shared/keys.ts`). An SSM SecureString in the standard tier (no charge)
 * encrypted with the AWS-managed `aws/ssm` key, created by a custom resource
 * with 32 random bytes so the value exists nowhere else. The functions read
 * it once per execution environment. Rotation: put a new value into the
 * parameter; environments pick it up as they start, and what was sealed with
 * the old one is refused (docs/security.md).
 *
 * Its parameter (`/<stack name>/request-state-key`), the variable naming it
 * (`TASKS_STATE_KEY_PARAMETER`) and the custom resource's type
 * (`Custom::RequestStateKey`) keep the names they were deployed with: a
 * running stack and its functions keep reading them.
 */
export class StackSecret extends Construct {
  /** The parameter's name (`/<stack name>/request-state-key`). */
  readonly parameterName: string;
  readonly parameterArn: string;
  readonly resource: CustomResource;

  constructor(scope: Construct, id: string, props: StackSecretProps) {
    super(scope, id);
    const stack = Stack.of(this);
    this.parameterName = `/${stack.stackName}/request-state-key`;
    this.parameterArn = Arn.format({ service: 'ssm', resource: 'parameter', resourceName: this.parameterName.slice(1) }, stack);

    const creator = new TaskFunction(this, 'Creator', {
      entry: 'stackSecret',
      code: props.code,
      description: "MCP tasks: creates the stack's secret (custom resource)",
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
