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
export function rawJsonSchemaOf(schema: z.ZodType): JsonSchemaObject | undefined {
  return rawSchemas.get(schema);
}
