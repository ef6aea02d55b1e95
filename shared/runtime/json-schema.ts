import { fromJsonSchema } from '@modelcontextprotocol/server';
import * as z from 'zod';

/** A JSON Schema for a tool's arguments (an object schema; any dialect the SDK's validator knows, 2020-12 included). */
export type JsonSchemaObject = Record<string, unknown> & { type: 'object' };

/** The raw JSON Schema behind each schema made by {@link jsonSchemaInput}, for `tools/list`. */
const rawSchemas = new WeakMap<z.ZodType, JsonSchemaObject>();

/**
 * A tool input schema given as raw JSON Schema instead of zod: `tools/list`
 * shows it exactly as written (`$schema`, `$defs`, `$anchor`, `allOf`,
 * `if`/`then`/`else`, `additionalProperties` …), and arguments are checked
 * against it with the MCP SDK's JSON Schema validator (Ajv) before the
 * handler runs; a mismatch is a tool error naming the failed keyword, like
 * any other invalid arguments. The handler receives the arguments as sent
 * (`Record<string, unknown>`): narrow them yourself.
 *
 * @example
 * ```ts
 * inputSchema: jsonSchemaInput({
 *   $schema: 'https://json-schema.org/draft/2020-12/schema',
 *   type: 'object',
 *   properties: { email: { type: 'string' } },
 *   required: ['email'],
 *   additionalProperties: false,
 * }),
 * ```
 */
export function jsonSchemaInput(schema: JsonSchemaObject): z.ZodType<Record<string, unknown>> {
  // Compiled once, when the tool is defined: a broken schema fails at start-up, not per call.
  const standard = fromJsonSchema<Record<string, unknown>>(schema as never)['~standard'];
  const zod = z
    .object({})
    .catchall(z.unknown())
    .superRefine((value, ctx) => {
      const outcome = standard.validate(value);
      if (outcome instanceof Promise) throw new Error('The JSON Schema validator must be synchronous');
      for (const issue of outcome.issues ?? []) ctx.addIssue({ code: 'custom', message: issue.message });
    });
  rawSchemas.set(zod, schema);
  return zod;
}

/** The raw JSON Schema a tool declared through {@link jsonSchemaInput}, if it did. */
function rawJsonSchemaOf(schema: z.ZodType): JsonSchemaObject | undefined {
  return rawSchemas.get(schema);
}

/**
 * A tool's input schema as JSON Schema, as `tools/list` shows it: a raw JSON
 * Schema as written, a zod schema converted (its `.meta()` keys, such as
 * `x-mcp-header`, kept on their properties).
 */
export function inputJsonSchema(schema: z.ZodType): JsonSchemaObject {
  return rawJsonSchemaOf(schema) ?? (z.toJSONSchema(schema, { io: 'input' }) as JsonSchemaObject);
}

/** Compiled validators of schemas met lately, by their JSON text (questions repeat: compile each once). */
const compiled = new Map<string, ReturnType<typeof fromJsonSchema>['~standard']>();
const MAX_COMPILED = 64;

/**
 * Why `value` does not match the JSON Schema `schema`, one clause per
 * mismatch joined with `; `, or `undefined` when it matches: the MCP SDK's
 * validator (Ajv, formats included), the one tools' raw input schemas are
 * checked with. Its words are kept, with the property named in quotes
 * (`"age" must be an integer`, `missing "name"`).
 */
export function schemaMismatch(schema: Record<string, unknown>, value: unknown): string | undefined {
  const text = JSON.stringify(schema);
  let standard = compiled.get(text);
  if (!standard) {
    standard = fromJsonSchema(schema as never)['~standard'];
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(text, standard);
  }
  const outcome = standard.validate(value);
  if (outcome instanceof Promise) throw new Error('The JSON Schema validator must be synchronous');
  const issues = outcome.issues ?? [];
  if (issues.length === 0) return undefined;
  // The SDK joins Ajv's errors (`data/<path> <message>`) into one message per issue.
  return issues
    .flatMap((issue) => issue.message.split(/, (?=data[/ ])/))
    .map(clause)
    .join('; ');
}

const ARTICLE_TYPES = /^must be (string|number|integer|boolean|object|array|null)\b/;

/** One Ajv error (`data/a/b must be integer`) as `"a.b" must be an integer`. */
function clause(error: string): string {
  const match = /^data(?:\/(\S*))? (.*)$/s.exec(error);
  if (!match) return error;
  const [, path, message = ''] = match;
  const required = /^must have required property '(.*)'$/.exec(message);
  const subject = path ? `"${path.split('/').join('.')}" ` : '';
  if (required) return `missing "${path ? `${path.split('/').join('.')}.` : ''}${required[1]}"`;
  const worded = message.replace(ARTICLE_TYPES, (_all, type: string) => `must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`);
  return `${subject}${worded}`;
}
