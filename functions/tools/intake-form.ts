import * as z from 'zod';
import { defineTool } from '#tool';

/** The questions, asked together: a form of each kind of field a question may have. */
const CONTACT_SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Your name', minLength: 1, maxLength: 80 },
    email: { type: 'string', title: 'Email', format: 'email', description: 'Where the summary is sent' },
  },
  required: ['name', 'email'],
};

const PROJECT_SCHEMA = {
  type: 'object',
  properties: {
    team: { type: 'integer', title: 'Team size', minimum: 1, maximum: 500, default: 5 },
    remote: { type: 'boolean', title: 'Remote team', default: true },
    plan: {
      type: 'string',
      title: 'Plan',
      oneOf: [
        { const: 'starter', title: 'Starter' },
        { const: 'team', title: 'Team' },
        { const: 'enterprise', title: 'Enterprise' },
      ],
      default: 'team',
    },
    languages: {
      type: 'array',
      title: 'Languages used',
      items: {
        anyOf: [
          { const: 'ts', title: 'TypeScript' },
          { const: 'py', title: 'Python' },
          { const: 'go', title: 'Go' },
        ],
      },
      minItems: 1,
    },
    start: { type: 'string', title: 'Start date', format: 'date' },
  },
  required: ['plan', 'languages'],
};

/**
 * A tool that asks several questions, to try answering them: two forms at
 * once (contact details, the project), each with fields of several kinds
 * (lengths, an email, a range, a boolean, single and multiple choice with
 * titles, a date, defaults). While it waits the task is `input_required`
 * and nothing runs; a client without tasks answers through `task_answer`.
 */
export const intakeForm = defineTool({
  name: 'intake_form',
  title: 'Project intake form',
  description: 'Collects contact details and project facts by asking the user two short forms, then returns a summary.',
  inputSchema: z.object({
    project: z.string().min(1).max(200).describe('The project the form is about'),
  }),
  execution: 'task',
  handler: async ({ project }, ctx) => {
    const [contact, facts] = await Promise.all([
      ctx.elicit('contact', { message: `Who is the contact for ${project}?`, requestedSchema: CONTACT_SCHEMA }),
      ctx.elicit('project', { message: `Tell us about ${project}`, requestedSchema: PROJECT_SCHEMA }),
    ]);
    if (contact.action !== 'accept' || facts.action !== 'accept') {
      const message = `The intake form for ${project} was not filled in`;
      return { content: [{ type: 'text', text: message }], structuredContent: { completed: false, message }, isError: true };
    }
    const answers = { ...contact.content, ...facts.content };
    const languages = Array.isArray(answers['languages']) ? answers['languages'].join(', ') : '';
    const message =
      `Intake for ${project}: ${String(answers['name'])} <${String(answers['email'])}>, plan ${String(answers['plan'])}, ` +
      `languages ${languages}`;
    return { content: [{ type: 'text', text: message }], structuredContent: { completed: true, project, answers, message } };
  },
});
