/**
 * CloudFormation's intrinsic functions, evaluated against the resources the
 * lane created on the emulators: a `Ref` or `Fn::GetAtt` becomes the name,
 * URL or ARN the deployed resource would have. Resources the lane does not
 * create get the physical names CloudFormation would generate
 * (`<stack>-<logicalId>`), and ARNs of the service's documented form, so the
 * IAM policies resolve to the same strings the recorded calls name.
 */
import type { Json } from './assembly.ts';

export const REGION = 'us-east-1';
/** fauxqs's account: its queue ARNs carry it, so every ARN of the lane does. */
export const ACCOUNT = '000000000000';
export const STACK_NAME = 'McpTasks';

/** A deployed resource: what `Ref` gives and its `Fn::GetAtt` attributes. */
export interface Physical {
  ref: string;
  attributes: Record<string, string>;
}

const PSEUDO: Record<string, string> = {
  'AWS::Region': REGION,
  'AWS::AccountId': ACCOUNT,
  'AWS::Partition': 'aws',
  'AWS::StackName': STACK_NAME,
  'AWS::URLSuffix': 'amazonaws.com',
  'AWS::StackId': `arn:aws:cloudformation:${REGION}:${ACCOUNT}:stack/${STACK_NAME}/00000000-0000-0000-0000-000000000000`,
  'AWS::NoValue': '',
};

/** The physical resource CloudFormation would create for a resource of this type, unless the lane made one itself. */
export function defaultPhysical(logicalId: string, type: string): Physical {
  const name = `${STACK_NAME}-${logicalId}`;
  const arn = (service: string, resource: string) => `arn:aws:${service}:${REGION}:${ACCOUNT}:${resource}`;
  switch (type) {
    case 'AWS::DynamoDB::Table':
      return { ref: name, attributes: { Arn: arn('dynamodb', `table/${name}`) } };
    case 'AWS::SQS::Queue':
      return {
        ref: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}`,
        attributes: { Arn: arn('sqs', name), QueueName: name, QueueUrl: `https://sqs.${REGION}.amazonaws.com/${ACCOUNT}/${name}` },
      };
    case 'AWS::Logs::LogGroup':
      return { ref: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
    case 'AWS::Lambda::Function':
      return { ref: name, attributes: { Arn: arn('lambda', `function:${name}`) } };
    case 'AWS::IAM::Role':
      return { ref: name, attributes: { Arn: `arn:aws:iam::${ACCOUNT}:role/${name}`, RoleId: `AROA${logicalId.toUpperCase()}` } };
    case 'AWS::Events::EventBus':
      return { ref: name, attributes: { Arn: arn('events', `event-bus/${name}`), Name: name } };
    case 'AWS::ApiGatewayV2::Api':
      return { ref: 'lane0api01', attributes: { ApiEndpoint: `https://lane0api01.execute-api.${REGION}.amazonaws.com` } };
    default:
      return { ref: name, attributes: { Arn: arn(type.split('::')[1]!.toLowerCase(), name) } };
  }
}

/** Evaluates intrinsic functions in `value` (any JSON) with these resources. */
export function resolver(template: Json, physical: Map<string, Physical>) {
  const resources = template['Resources'] as Record<string, Json>;
  const lookup = (logicalId: string): Physical => {
    const known = physical.get(logicalId);
    if (known) return known;
    const resource = resources[logicalId];
    if (!resource) throw new Error(`Ref to ${logicalId}, which the template does not declare`);
    const made = defaultPhysical(logicalId, String(resource['Type']));
    physical.set(logicalId, made);
    return made;
  };
  const ref = (name: string): string => {
    if (name in PSEUDO) return PSEUDO[name]!;
    return lookup(name).ref;
  };
  const getAtt = (logicalId: string, attribute: string): string => {
    const value = lookup(logicalId).attributes[attribute];
    if (value === undefined) throw new Error(`Fn::GetAtt ${logicalId}.${attribute}: the lane does not know this attribute`);
    return value;
  };
  const resolve = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(resolve);
    if (value === null || typeof value !== 'object') return value;
    const entries = Object.entries(value as Record<string, unknown>);
    if (entries.length === 1) {
      const [key, arg] = entries[0]!;
      switch (key) {
        case 'Ref':
          return ref(String(arg));
        case 'Fn::GetAtt': {
          const [id, attribute] = Array.isArray(arg) ? arg : String(arg).split('.');
          return getAtt(String(id), String(attribute));
        }
        case 'Fn::Join': {
          const [separator, parts] = arg as [string, unknown[]];
          return (resolve(parts) as unknown[]).map(String).join(separator);
        }
        case 'Fn::Select': {
          const [index, list] = arg as [unknown, unknown];
          return (resolve(list) as unknown[])[Number(resolve(index))];
        }
        case 'Fn::Split': {
          const [separator, text] = arg as [string, unknown];
          return String(resolve(text)).split(separator);
        }
        case 'Fn::Sub': {
          const [text, variables] = Array.isArray(arg) ? (arg as [string, Record<string, unknown>]) : [String(arg), {}];
          return text.replace(/\$\{([^}]+)\}/g, (_, name: string) => {
            if (name in variables) return String(resolve(variables[name]));
            const [id, attribute] = name.split('.');
            return attribute ? getAtt(id!, attribute) : ref(id!);
          });
        }
        default:
          if (key.startsWith('Fn::')) throw new Error(`The lane cannot evaluate ${key}`);
      }
    }
    return Object.fromEntries(entries.map(([key, inner]) => [key, resolve(inner)]));
  };
  return resolve;
}
