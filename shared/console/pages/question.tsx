/**
 * One open question of a task: a form built from its requested schema
 * (`forms.ts`), posted to the task's answer route with the session's form
 * token. Requests that are not form-mode elicitations (a sampling request,
 * a URL-mode elicitation) are shown, not answered here: an MCP client
 * answers those.
 */
import type { Child } from 'hono/jsx';
import { formatDuration } from '../../durations.ts';
import { taskPagePath } from '../../links.ts';
import type { InputRequest } from '../../tasks/model.ts';
import { FIELD_PREFIX, type Field, formFields, type PostedForm } from '../forms.ts';
import { jsonText, safeHref } from '../view.ts';

/** What a question's form shows after a refused answer: the problems, and the values as posted. */
export interface Refusal {
  key: string;
  problems: string[];
  form: PostedForm;
}

/** The question `key` of task `taskId`; `blocked` says why this person may not decide it (the form is then left out). */
export function Question(props: {
  taskId: string;
  questionKey: string;
  request: InputRequest;
  formToken: string;
  refusal?: Refusal;
  /** When the wait ends (epoch ms) and the time now: the page shows the deadline. */
  deadline?: { at: number; now: number };
  blocked?: string;
}) {
  const { request, questionKey, deadline } = props;
  const params = request.params ?? {};
  const message = typeof params['message'] === 'string' ? params['message'] : request.method;
  const formMode = request.method === 'elicitation/create' && (params['mode'] === undefined || params['mode'] === 'form');
  return (
    <section data-question={questionKey} aria-labelledby={`q-${questionKey}`}>
      <h3 id={`q-${questionKey}`}>{message}</h3>
      {deadline ? (
        <p class="deadline" data-deadline={new Date(deadline.at).toISOString()}>
          {`Open until ${new Date(deadline.at).toISOString()} (${formatDuration(Math.max(0, deadline.at - deadline.now), { approximate: true })} from now); then the task fails.`}
        </p>
      ) : null}
      {props.blocked ? (
        <p class="problems" role="alert" data-blocked="yes">
          {props.blocked}
        </p>
      ) : formMode ? (
        <AnswerForm {...props} fields={formFields(params['requestedSchema'])} />
      ) : (
        <NotHere request={request} />
      )}
    </section>
  );
}

function AnswerForm(props: { taskId: string; questionKey: string; formToken: string; refusal?: Refusal; fields: Field[] }) {
  const refused = props.refusal?.key === props.questionKey ? props.refusal : undefined;
  return (
    <form method="post" action={`${taskPagePath(props.taskId)}/answer`}>
      {refused ? (
        <ul class="problems" role="alert">
          {refused.problems.map((problem) => (
            <li>{problem}</li>
          ))}
        </ul>
      ) : null}
      <input type="hidden" name="token" value={props.formToken} />
      <input type="hidden" name="key" value={props.questionKey} />
      {props.fields.map((field) => (
        <FieldInput field={field} posted={refused?.form} />
      ))}
      <button type="submit">Answer</button>
    </form>
  );
}

/** A request the page does not answer: what it asks, and who answers it. */
function NotHere(props: { request: InputRequest }) {
  const { request } = props;
  const url = request.params?.['url'];
  const href = safeHref(url);
  return (
    <>
      {request.method === 'elicitation/create' && typeof url === 'string' ? <p>{href ? <a href={href}>{url}</a> : url}</p> : null}
      <p>An MCP client that supports {request.method} answers this request; it cannot be answered on this page.</p>
      <pre>{jsonText(request.params ?? {})}</pre>
    </>
  );
}

/** The posted value(s) of a field, else its default. */
function postedValues(field: Field, posted: PostedForm | undefined): string[] | undefined {
  if (!posted) return undefined;
  const raw = posted[`${FIELD_PREFIX}${field.name}`];
  return Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
}

/** What each control of a field is drawn from: the input's name, the field's label and hint, the posted values (after a refusal). */
interface ControlProps<F extends Field['control']> {
  field: Extract<Field, { control: F }>;
  name: string;
  label: Child;
  hint: Child;
  posted: string[] | undefined;
}

function FieldInput(props: { field: Field; posted: PostedForm | undefined }) {
  const { field } = props;
  const common = {
    name: `${FIELD_PREFIX}${field.name}`,
    label: (
      <>
        {field.label}
        {field.required ? ' *' : ''}
      </>
    ),
    hint: field.description ? <small>{field.description}</small> : null,
    posted: postedValues(field, props.posted),
  };
  switch (field.control) {
    case 'boolean':
      return <BooleanControl field={field} {...common} />;
    case 'select':
      return <SelectControl field={field} {...common} />;
    case 'multi':
      return <MultiControl field={field} {...common} />;
    case 'number':
      return <NumberControl field={field} {...common} />;
    case 'text':
      return <TextControl field={field} {...common} />;
    case 'json':
      return <JsonControl field={field} {...common} />;
  }
}

function BooleanControl({ field, name, label, hint, posted }: ControlProps<'boolean'>) {
  const value = posted ? posted[0] : field.value === undefined ? undefined : String(field.value);
  return (
    <fieldset>
      <legend>{label}</legend>
      {hint}
      <label>
        <input type="radio" name={name} value="true" checked={value === 'true'} required={field.required} /> Yes
      </label>
      <label>
        <input type="radio" name={name} value="false" checked={value === 'false'} /> No
      </label>
    </fieldset>
  );
}

function SelectControl({ field, name, label, hint, posted }: ControlProps<'select'>) {
  const value = posted ? posted[0] : field.value;
  return (
    <label>
      {label}
      {hint}
      <select name={name} required={field.required}>
        <option value="">–</option>
        {field.choices.map((choice) => (
          <option value={choice.value} selected={choice.value === value}>
            {choice.label}
          </option>
        ))}
      </select>
    </label>
  );
}

function MultiControl({ field, name, label, hint, posted }: ControlProps<'multi'>) {
  const values = posted ?? field.values;
  const bounds = [
    field.minItems === undefined ? '' : `at least ${field.minItems}`,
    field.maxItems === undefined ? '' : `at most ${field.maxItems}`,
  ]
    .filter(Boolean)
    .join(', ');
  return (
    <fieldset>
      <legend>
        {label}
        {bounds ? ` (${bounds})` : ''}
      </legend>
      {hint}
      {field.choices.map((choice) => (
        <label>
          <input type="checkbox" name={name} value={choice.value} checked={values.includes(choice.value)} /> {choice.label}
        </label>
      ))}
    </fieldset>
  );
}

function NumberControl({ field, name, label, hint, posted }: ControlProps<'number'>) {
  const value = posted ? posted[0] : field.value === undefined ? undefined : String(field.value);
  return (
    <label>
      {label}
      {hint}
      <input
        type="number"
        name={name}
        step={field.integer ? '1' : 'any'}
        min={field.min}
        max={field.max}
        value={value}
        required={field.required}
      />
    </label>
  );
}

function TextControl({ field, name, label, hint, posted }: ControlProps<'text'>) {
  const given = posted ? posted[0] : field.value;
  // A date-time default (RFC 3339) as the browser's date-time input takes it: minutes, no offset.
  const value = field.inputType === 'datetime-local' && given && !posted ? given.slice(0, 16) : given;
  return (
    <label>
      {label}
      {field.inputType === 'datetime-local' ? ' (UTC)' : ''}
      {hint}
      <input
        type={field.inputType}
        name={name}
        minlength={field.minLength}
        maxlength={field.maxLength}
        value={value}
        required={field.required}
      />
    </label>
  );
}

function JsonControl({ field, name, label, hint, posted }: ControlProps<'json'>) {
  return (
    <label>
      {label} (JSON)
      {hint}
      <textarea name={name} required={field.required}>
        {posted ? posted[0] : field.value}
      </textarea>
    </label>
  );
}
