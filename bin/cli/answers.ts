/**
 * Answers to `input_required` rounds given up front, for scripts: from
 * `--answer` flags and a JSON file, matched to each request by its key.
 *
 *   --answer approval.approve=true      a field of the form (typed by the requestedSchema)
 *   --answer approval=decline           decline (or `cancel`) the request
 *   --answers-file answers.json         { "approval": { "action": "accept", "content": { "approve": true } } }
 *                                       or the content alone: { "approval": { "approve": true } }
 */
import { readFileSync } from 'node:fs';
import type { InputRequest } from '../../shared/tasks/model.ts';
import type { InputResponses } from './client.ts';

type Given = { action: 'accept'; content: Record<string, string | unknown> } | { action: 'decline' | 'cancel' };

/** Answers by key, as given on the command line (field values still untyped strings). */
export class GivenAnswers {
  readonly #byKey = new Map<string, Given>();

  /** Parses `--answer` values and an optional answers file; throws on a malformed one. */
  static parse(flags: string[], file?: string): GivenAnswers {
    const given = new GivenAnswers();
    if (file !== undefined) {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8'));
      if (!isRecord(parsed)) throw new Error(`${file} must hold a JSON object keyed by input request`);
      for (const [key, value] of Object.entries(parsed)) {
        if (!isRecord(value)) throw new Error(`${file}: "${key}" must be an object`);
        const action = value['action'];
        if (action === 'decline' || action === 'cancel') given.#byKey.set(key, { action });
        else if (action === 'accept') given.#byKey.set(key, { action, content: isRecord(value['content']) ? value['content'] : {} });
        else given.#byKey.set(key, { action: 'accept', content: value });
      }
    }
    for (const flag of flags) {
      const match = /^([^.=]+)(?:\.([^=]+))?=(.*)$/s.exec(flag);
      if (!match) throw new Error(`--answer must look like key.field=value or key=decline, got "${flag}"`);
      const [, key, field, value] = match as unknown as [string, string, string | undefined, string];
      if (field === undefined) {
        if (value !== 'decline' && value !== 'cancel' && value !== 'accept')
          throw new Error(`--answer ${key}=… must be accept, decline or cancel`);
        given.#byKey.set(key, value === 'accept' ? { action: 'accept', content: {} } : { action: value });
        continue;
      }
      const existing = given.#byKey.get(key);
      const content = existing?.action === 'accept' ? existing.content : {};
      given.#byKey.set(key, { action: 'accept', content: { ...content, [field]: value } });
    }
    return given;
  }

  get size(): number {
    return this.#byKey.size;
  }

  /** Whether an answer was given for every one of `requests` (so none of them waits for a person here). */
  covers(requests: Record<string, InputRequest>): boolean {
    const keys = Object.keys(requests);
    return keys.length > 0 && keys.every((key) => this.#byKey.has(key));
  }

  /**
   * The answers for those of `requests` that were given, typed by each
   * request's `requestedSchema`; `undefined` unless every request is covered.
   */
  answer(requests: Record<string, InputRequest>): InputResponses | undefined {
    const answers: InputResponses = {};
    for (const [key, request] of Object.entries(requests)) {
      const given = this.#byKey.get(key);
      if (!given) return undefined;
      if (given.action !== 'accept') {
        answers[key] = { action: given.action };
        continue;
      }
      if (request.method === 'roots/list') {
        answers[key] = { roots: [] };
        continue;
      }
      const schema = requestedSchema(request);
      const content: Record<string, unknown> = {};
      for (const [field, raw] of Object.entries(given.content))
        content[field] = typeof raw === 'string' ? coerce(raw, schema.properties[field], `${key}.${field}`) : raw;
      for (const required of schema.required) {
        if (!(required in content)) throw new Error(`The answer to "${key}" lacks the required field "${required}"`);
      }
      answers[key] = { action: 'accept', content };
    }
    return answers;
  }
}

/** A property of a form's `requestedSchema` (the primitive subset elicitation allows). */
export interface FieldSchema {
  type?: string;
  title?: string;
  description?: string;
  enum?: unknown[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  default?: unknown;
  [key: string]: unknown;
}

/** The form a request asks for: its fields in order, and which are required. */
export function requestedSchema(request: InputRequest): { properties: Record<string, FieldSchema>; required: string[] } {
  const schema = request.params?.['requestedSchema'];
  if (!isRecord(schema)) return { properties: {}, required: [] };
  const properties = isRecord(schema['properties']) ? (schema['properties'] as Record<string, FieldSchema>) : {};
  const required = Array.isArray(schema['required']) ? schema['required'].filter((name): name is string => typeof name === 'string') : [];
  return { properties, required };
}

/** The allowed values of an enum field (`enum` or titled `oneOf`), if it is one. */
export function enumValues(field: FieldSchema | undefined): Array<{ value: unknown; title: string }> | undefined {
  if (Array.isArray(field?.enum)) return field.enum.map((value) => ({ value, title: String(value) }));
  if (Array.isArray(field?.oneOf))
    return field.oneOf.map((option) => ({ value: option.const, title: option.title ?? String(option.const) }));
  return undefined;
}

function coerce(raw: string, field: FieldSchema | undefined, where: string): unknown {
  switch (field?.type) {
    case 'boolean':
      if (/^(true|yes|y|1)$/i.test(raw)) return true;
      if (/^(false|no|n|0)$/i.test(raw)) return false;
      throw new Error(`${where} must be true or false, got "${raw}"`);
    case 'number':
    case 'integer': {
      const value = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(value) || (field.type === 'integer' && !Number.isInteger(value)))
        throw new Error(`${where} must be ${field.type === 'integer' ? 'an' : 'a'} ${field.type}, got "${raw}"`);
      return value;
    }
    default: {
      const values = enumValues(field);
      if (values && !values.some((option) => option.value === raw))
        throw new Error(`${where} must be one of ${values.map((option) => String(option.value)).join(', ')}`);
      return raw;
    }
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
