/**
 * A question's form, from its requested schema (the object schema of a
 * form-mode elicitation: strings with formats and lengths, numbers and
 * integers with bounds, booleans, single- and multi-select enums with or
 * without titles, defaults, required fields), and a posted form back to the
 * answer's content. The answer is then checked against the schema itself
 * (`checkGivenAnswers`): the form's own constraints only help the browser
 * say so earlier.
 */

/** One choice of a select. */
export interface Choice {
  value: string;
  label: string;
}

interface FieldBase {
  /** The property's name in the schema. */
  name: string;
  /** Its title, else its name. */
  label: string;
  description?: string;
  required: boolean;
}

/** One input of a question's form. */
export type Field = FieldBase &
  (
    | {
        control: 'text';
        inputType: 'text' | 'email' | 'url' | 'date' | 'datetime-local';
        minLength?: number;
        maxLength?: number;
        value?: string;
      }
    | { control: 'number'; integer: boolean; min?: number; max?: number; value?: number }
    | { control: 'boolean'; value?: boolean }
    | { control: 'select'; choices: Choice[]; value?: string }
    | { control: 'multi'; choices: Choice[]; values: string[]; minItems?: number; maxItems?: number }
    /** Anything else the schema allows: typed as JSON. */
    | { control: 'json'; value?: string }
  );

/** The prefix of a field's input name (`field.<property>`), so a property never clashes with the form's own inputs. */
export const FIELD_PREFIX = 'field.';

type Schema = Record<string, unknown>;

const num = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const str = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The fields of a requested schema, in its properties' order. */
export function formFields(requestedSchema: unknown): Field[] {
  const schema = (typeof requestedSchema === 'object' && requestedSchema !== null ? requestedSchema : {}) as Schema;
  const properties = (typeof schema['properties'] === 'object' && schema['properties'] !== null ? schema['properties'] : {}) as Record<
    string,
    Schema
  >;
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as unknown[]).filter((k) => typeof k === 'string') : []);
  return Object.entries(properties).map(([name, property]) => fieldOf(name, property ?? {}, required.has(name)));
}

function fieldOf(name: string, property: Schema, required: boolean): Field {
  const base: FieldBase = {
    name,
    label: str(property['title']) || name,
    required,
    ...(str(property['description']) ? { description: str(property['description'])! } : {}),
  };
  const choices = choicesOf(property);
  if (choices) {
    const value = str(property['default']);
    return { ...base, control: 'select', choices, ...(value === undefined ? {} : { value }) };
  }
  switch (property['type']) {
    case 'string':
      return textField(base, property);
    case 'number':
    case 'integer': {
      const [min, max, value] = [num(property['minimum']), num(property['maximum']), num(property['default'])];
      return {
        ...base,
        control: 'number',
        integer: property['type'] === 'integer',
        ...(min === undefined ? {} : { min }),
        ...(max === undefined ? {} : { max }),
        ...(value === undefined ? {} : { value }),
      };
    }
    case 'boolean':
      return { ...base, control: 'boolean', ...(typeof property['default'] === 'boolean' ? { value: property['default'] } : {}) };
    case 'array': {
      const items = choicesOf((property['items'] ?? {}) as Schema);
      if (!items) break;
      const defaults = Array.isArray(property['default']) ? (property['default'] as unknown[]).filter((v) => typeof v === 'string') : [];
      const [minItems, maxItems] = [num(property['minItems']), num(property['maxItems'])];
      return {
        ...base,
        control: 'multi',
        choices: items,
        values: defaults,
        ...(minItems === undefined ? {} : { minItems }),
        ...(maxItems === undefined ? {} : { maxItems }),
      };
    }
  }
  return { ...base, control: 'json', ...(property['default'] === undefined ? {} : { value: JSON.stringify(property['default']) }) };
}

const INPUT_TYPES: Record<string, 'email' | 'url' | 'date' | 'datetime-local'> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

function textField(base: FieldBase, property: Schema): Field {
  const [minLength, maxLength, value] = [num(property['minLength']), num(property['maxLength']), str(property['default'])];
  return {
    ...base,
    control: 'text',
    inputType: INPUT_TYPES[str(property['format']) ?? ''] ?? 'text',
    ...(minLength === undefined ? {} : { minLength }),
    ...(maxLength === undefined ? {} : { maxLength }),
    ...(value === undefined ? {} : { value }),
  };
}

/** The choices of an enum (`enum` with `enumNames`, or `oneOf`/`anyOf` of `{ const, title }`), else `undefined`. */
function choicesOf(schema: Schema): Choice[] | undefined {
  if (Array.isArray(schema['enum'])) {
    const names = Array.isArray(schema['enumNames']) ? (schema['enumNames'] as unknown[]) : [];
    return (schema['enum'] as unknown[]).map((value, i) => ({ value: String(value), label: str(names[i]) ?? String(value) }));
  }
  const options = Array.isArray(schema['oneOf']) ? schema['oneOf'] : Array.isArray(schema['anyOf']) ? schema['anyOf'] : undefined;
  if (!options || !(options as unknown[]).every((o) => typeof o === 'object' && o !== null && 'const' in o)) return undefined;
  return (options as Schema[]).map((option) => ({
    value: String(option['const']),
    label: str(option['title']) ?? String(option['const']),
  }));
}

/** A posted form's values, by input name: a list for repeated names (checkboxes). */
export type PostedForm = Record<string, string | string[] | undefined>;

/**
 * The answer's content from a posted form: each field's value typed as its
 * schema says. An empty field is left out (so a required one is reported
 * missing); a value that does not parse is kept as typed, for the schema
 * check to name it.
 */
export function formContent(fields: readonly Field[], form: PostedForm): Record<string, unknown> {
  const content: Record<string, unknown> = {};
  for (const field of fields) {
    const raw = form[`${FIELD_PREFIX}${field.name}`];
    const values = (Array.isArray(raw) ? raw : raw === undefined ? [] : [raw]).filter((value) => value !== '');
    if (values.length === 0) continue;
    const value = field.control === 'multi' ? values : typed(field, values[0]!);
    content[field.name] = value;
  }
  return content;
}

function typed(field: Field, raw: string): unknown {
  switch (field.control) {
    case 'number': {
      const value = Number(raw);
      return raw.trim() === '' || Number.isNaN(value) ? raw : value;
    }
    case 'boolean':
      return raw === 'true' ? true : raw === 'false' ? false : raw;
    case 'text':
      // A browser's date-time input has no seconds or offset; the schema's `date-time` wants both. Times are UTC.
      if (field.inputType !== 'datetime-local' || !/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d)?$/.test(raw)) return raw;
      return raw.length === 16 ? `${raw}:00Z` : `${raw}Z`;
    case 'json':
      try {
        return JSON.parse(raw) as unknown;
      } catch (error) {
        if (error instanceof SyntaxError) return raw;
        throw error;
      }
    default:
      return raw;
  }
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * Each field's problem with a posted form, in words a person acts on
 * ("Enter an email address, such as name@example.com."), by property name:
 * shown beside the field. The schema check stays the authority; these say
 * the common cases in words first.
 */
export function fieldProblems(fields: readonly Field[], content: Record<string, unknown>): Record<string, string> {
  const problems: Record<string, string> = {};
  for (const field of fields) {
    const problem = fieldProblem(field, content[field.name]);
    if (problem) problems[field.name] = problem;
  }
  return problems;
}

function fieldProblem(field: Field, value: unknown): string | undefined {
  if (value === undefined) return field.required ? 'This is required: give an answer.' : undefined;
  switch (field.control) {
    case 'text':
      return textProblem(field, String(value));
    case 'number': {
      if (typeof value !== 'number') return field.integer ? 'Enter a whole number, such as 12.' : 'Enter a number, such as 1.5.';
      if (field.integer && !Number.isInteger(value)) return 'Enter a whole number, such as 12.';
      if (field.min !== undefined && value < field.min) return `Enter ${field.min} or more.`;
      if (field.max !== undefined && value > field.max) return `Enter ${field.max} or less.`;
      return undefined;
    }
    case 'boolean':
      return typeof value === 'boolean' ? undefined : 'Choose Yes or No.';
    case 'select':
      return field.choices.some((choice) => choice.value === value) ? undefined : 'Choose one of the options.';
    case 'multi': {
      const count = Array.isArray(value) ? value.length : 0;
      if (field.minItems !== undefined && count < field.minItems) return `Choose at least ${field.minItems}.`;
      if (field.maxItems !== undefined && count > field.maxItems) return `Choose at most ${field.maxItems}.`;
      return undefined;
    }
    case 'json':
      return typeof value === 'string' ? 'Enter valid JSON, such as {"key": "value"}.' : undefined;
  }
}

function textProblem(field: Extract<Field, { control: 'text' }>, text: string): string | undefined {
  if (field.minLength !== undefined && text.length < field.minLength) return `Use at least ${field.minLength} characters.`;
  if (field.maxLength !== undefined && text.length > field.maxLength) return `Use at most ${field.maxLength} characters.`;
  if (field.inputType === 'email' && !EMAIL.test(text)) return 'Enter an email address, such as name@example.com.';
  if (field.inputType === 'url' && !URL.canParse(text)) return 'Enter a web address, such as https://example.com.';
  if (field.inputType === 'date' && !DATE.test(text)) return 'Enter a date, such as 2027-03-01.';
  if (field.inputType === 'datetime-local' && Number.isNaN(Date.parse(text))) return 'Enter a date and time.';
  return undefined;
}
