/**
 * Interactive answers to `input_required` rounds, built from each request's
 * `requestedSchema`: strings, numbers (and integers), booleans and enums,
 * with the choice to decline or cancel a request instead.
 */
import { confirm, input, number, select } from '@inquirer/prompts';
import type { InputRequest } from '../../shared/tasks/model.ts';
import { enumValues, type FieldSchema, requestedSchema } from './answers.ts';
import type { InputResponses } from './client.ts';

/** Thrown when the person presses Ctrl-C inside a prompt. */
export function isPromptInterrupt(error: unknown): boolean {
  return error instanceof Error && error.name === 'ExitPromptError';
}

/** Asks the person for every request of a round; returns the round's answers. */
export async function promptForInput(
  requests: Record<string, InputRequest>,
  output: NodeJS.WritableStream = process.stderr,
): Promise<InputResponses> {
  const answers: InputResponses = {};
  for (const [key, request] of Object.entries(requests)) {
    if (request.method === 'roots/list') {
      answers[key] = { roots: [] };
      continue;
    }
    if (request.method !== 'elicitation/create') {
      throw new Error(`The server asks "${key}" through ${request.method}, which this client cannot answer`);
    }
    const message = typeof request.params?.['message'] === 'string' ? request.params['message'] : key;
    const url = request.params?.['url'];
    if (typeof url === 'string') {
      output.write(`${message}\nOpen ${url}\n`);
      answers[key] = (await confirm({ message: 'Done?', default: true })) ? { action: 'accept' } : { action: 'decline' };
      continue;
    }
    output.write(`\n${message}\n`);
    const action = await select({
      message: 'Your answer',
      choices: [
        { name: 'Respond', value: 'accept' },
        { name: 'Decline', value: 'decline' },
        { name: 'Cancel', value: 'cancel' },
      ],
    });
    if (action !== 'accept') {
      answers[key] = { action };
      continue;
    }
    const schema = requestedSchema(request);
    const content: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(schema.properties)) {
      const value = await promptField(name, field, schema.required.includes(name));
      if (value !== undefined) content[name] = value;
    }
    answers[key] = { action: 'accept', content };
  }
  return answers;
}

async function promptField(name: string, field: FieldSchema, required: boolean): Promise<unknown> {
  const label = `${field.title ?? name}${field.description ? ` (${field.description})` : ''}`;
  const values = enumValues(field);
  if (values) {
    const choices = values.map((option) => ({ name: option.title, value: option.value }));
    return select({ message: label, choices: required ? choices : [{ name: '(none)', value: undefined }, ...choices] });
  }
  switch (field.type) {
    case 'boolean':
      return confirm({ message: label, default: typeof field.default === 'boolean' ? field.default : false });
    case 'number':
    case 'integer': {
      const value = await number({
        message: label,
        required,
        ...(field.type === 'integer' ? { step: 1 } : { step: 'any' as const }),
        ...(typeof field['minimum'] === 'number' ? { min: field['minimum'] } : {}),
        ...(typeof field['maximum'] === 'number' ? { max: field['maximum'] } : {}),
      });
      return value;
    }
    default: {
      const value = await input({ message: label, required, ...(typeof field.default === 'string' ? { default: field.default } : {}) });
      return value === '' && !required ? undefined : value;
    }
  }
}
