/**
 * One open question of a task: a yes-or-no approval as a card (Approve,
 * Reject, a reason sent either way), any other form built from its requested
 * schema (`forms.ts`, each refused field's problem beside it), posted to the task's answer route with the session's form
 * token. Requests that are not form-mode elicitations (a sampling request,
 * a URL-mode elicitation) are shown, not answered here: an MCP client
 * answers those.
 */
import type { Child } from 'hono/jsx';
import { taskPagePath } from '../../links.ts';
import type { InputRequest, TaskRecord } from '../../tasks/model.ts';
import { FIELD_PREFIX, type Field, formFields, type PostedForm } from '../forms.ts';
import type { UiNode } from '../nodes.ts';
import { withRaw } from '../values.ts';
import { safeHref } from '../view.ts';
import { isApprovalCard, timeNode } from '../words.ts';
import { Nodes } from './nodes.tsx';

/** What a question's form shows after a refused answer: the problems (each field's beside it), and the values as posted. */
export interface Refusal {
  key: string;
  /** Problems that belong to no one field (or the schema check's, when the fields' own found none). */
  problems: string[];
  /** Each field's problem, in words, by property name. */
  fields?: Record<string, string>;
  form: PostedForm;
}

/** What every question shows: the task it belongs to (its deadline, who asks) and the form's token. */
interface QuestionProps {
  task: TaskRecord;
  requester: string;
  questionKey: string;
  request: InputRequest;
  formToken: string;
  now: number;
  refusal?: Refusal;
  /** Why this person may not decide it (the form is then left out). */
  blocked?: string;
}

/** The question `key` of a task: an approval card, a form, or what it asks of an MCP client. */
export function Question(props: QuestionProps) {
  const { request, questionKey, task } = props;
  const params = request.params ?? {};
  const message = typeof params['message'] === 'string' ? params['message'] : request.method;
  const formMode = request.method === 'elicitation/create' && (params['mode'] === undefined || params['mode'] === 'form');
  const card = formMode && isApprovalCard(request);
  const refused = props.refusal?.key === questionKey ? props.refusal : undefined;
  return (
    <section data-question={questionKey} class={card ? 'card approval' : 'card'} aria-labelledby={`q-${questionKey}`}>
      <h3 id={`q-${questionKey}`}>{message}</h3>
      {card ? <ApprovalFacts requester={props.requester} /> : null}
      {task.sweepAt === undefined ? null : (
        <p class="deadline" data-deadline={new Date(task.sweepAt).toISOString()}>
          {'Deadline: '}
          <Nodes nodes={[timeNode(task.sweepAt, props.now)]} />
          {'; after that the task ends without an answer.'}
        </p>
      )}
      {props.blocked ? (
        <p class="problems" role="alert" data-blocked="yes">
          {props.blocked}
        </p>
      ) : card ? (
        <ApprovalForm taskId={task.taskId} questionKey={questionKey} formToken={props.formToken} refused={refused} />
      ) : formMode ? (
        <AnswerForm
          taskId={task.taskId}
          questionKey={questionKey}
          formToken={props.formToken}
          refused={refused}
          fields={formFields(params['requestedSchema'])}
        />
      ) : (
        <NotHere request={request} />
      )}
    </section>
  );
}

/** Who asks and what each answer does. */
function ApprovalFacts(props: { requester: string }) {
  return (
    <dl class="facts">
      <dt>Who asks</dt>
      <dd class="requester">{props.requester}</dd>
      <dt>If you approve</dt>
      <dd>The task goes on and does what it asks approval for.</dd>
      <dt>If you reject</dt>
      <dd>The task ends without doing it; your reason goes back to whoever started it.</dd>
    </dl>
  );
}

/** Approve or reject, with a reason that reaches the tool either way. */
function ApprovalForm(props: { taskId: string; questionKey: string; formToken: string; refused: Refusal | undefined }) {
  const id = `reason-${props.questionKey}`;
  const posted = props.refused?.form[`${FIELD_PREFIX}comment`];
  return (
    <form method="post" action={`${taskPagePath(props.taskId)}/answer`}>
      <Problems refused={props.refused} />
      <input type="hidden" name="token" value={props.formToken} />
      <input type="hidden" name="key" value={props.questionKey} />
      <label for={id}>Reason (optional; sent with your decision either way)</label>
      <textarea id={id} name={`${FIELD_PREFIX}comment`} rows={3}>
        {typeof posted === 'string' ? posted : ''}
      </textarea>
      <div class="actions">
        <button type="submit" name={`${FIELD_PREFIX}approve`} value="true" class="primary">
          Approve
        </button>
        <button type="submit" name={`${FIELD_PREFIX}approve`} value="false" class="danger">
          Reject
        </button>
      </div>
    </form>
  );
}

function Problems(props: { refused: Refusal | undefined }) {
  const { refused } = props;
  if (!refused) return null;
  const count = Object.keys(refused.fields ?? {}).length;
  return (
    <div class="problems" role="alert">
      {count > 0 ? (
        <p>
          {count === 1
            ? 'One answer needs a change: see the field marked below.'
            : `${count} answers need a change: see the fields marked below.`}
        </p>
      ) : null}
      {refused.problems.length > 0 ? (
        <ul>
          {refused.problems.map((problem) => (
            <li>{problem}</li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}

function AnswerForm(props: { taskId: string; questionKey: string; formToken: string; refused: Refusal | undefined; fields: Field[] }) {
  return (
    <form method="post" action={`${taskPagePath(props.taskId)}/answer`}>
      <Problems refused={props.refused} />
      <input type="hidden" name="token" value={props.formToken} />
      <input type="hidden" name="key" value={props.questionKey} />
      {props.fields.map((field) => (
        <FieldInput
          field={field}
          questionKey={props.questionKey}
          posted={props.refused?.form}
          problem={props.refused?.fields?.[field.name]}
        />
      ))}
      <button type="submit" class="primary">
        Send answer
      </button>
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
      <Nodes nodes={withRaw(request.params ?? {})} />
    </>
  );
}

/** The posted value(s) of a field, else its default. */
function postedValues(field: Field, posted: PostedForm | undefined): string[] | undefined {
  if (!posted) return undefined;
  const raw = posted[`${FIELD_PREFIX}${field.name}`];
  return Array.isArray(raw) ? raw : raw === undefined ? [] : [raw];
}

/** What each control of a field is drawn from: the input's name and id, the field's label and hint, its problem, the posted values. */
interface ControlProps<F extends Field['control']> {
  field: Extract<Field, { control: F }>;
  name: string;
  id: string;
  label: Child;
  /** The hint and the problem (after a refusal), shown under the label. */
  notes: Child;
  /** The attributes tying the input to its notes. */
  aria: { 'aria-describedby'?: string; 'aria-invalid'?: 'true' };
  posted: string[] | undefined;
}

function FieldInput(props: { field: Field; questionKey: string; posted: PostedForm | undefined; problem: string | undefined }) {
  const { field, problem } = props;
  const id = `f-${props.questionKey}-${field.name}`;
  const described = [field.description ? `${id}-hint` : '', problem ? `${id}-problem` : ''].filter(Boolean).join(' ');
  const common = {
    name: `${FIELD_PREFIX}${field.name}`,
    id,
    label: (
      <>
        {field.label}
        {field.required ? <span class="required"> (required)</span> : null}
      </>
    ),
    notes: (
      <>
        {field.description ? (
          <small id={`${id}-hint`} class="hint">
            {field.description}
          </small>
        ) : null}
        {problem ? (
          <small id={`${id}-problem`} class="field-problem">
            {problem}
          </small>
        ) : null}
      </>
    ),
    aria: { ...(described ? { 'aria-describedby': described } : {}), ...(problem ? { 'aria-invalid': 'true' as const } : {}) },
    posted: postedValues(field, props.posted),
  };
  const wrap = (control: Child) => <div class={problem ? 'field invalid' : 'field'}>{control}</div>;
  switch (field.control) {
    case 'boolean':
      return wrap(<BooleanControl field={field} {...common} />);
    case 'select':
      return wrap(<SelectControl field={field} {...common} />);
    case 'multi':
      return wrap(<MultiControl field={field} {...common} />);
    case 'number':
      return wrap(<NumberControl field={field} {...common} />);
    case 'text':
      return wrap(<TextControl field={field} {...common} />);
    case 'json':
      return wrap(<JsonControl field={field} {...common} />);
  }
}

function BooleanControl({ field, name, id, label, notes, aria, posted }: ControlProps<'boolean'>) {
  const value = posted ? posted[0] : field.value === undefined ? undefined : String(field.value);
  return (
    <fieldset {...aria}>
      <legend>{label}</legend>
      {notes}
      <label class="choice">
        <input type="radio" id={id} name={name} value="true" checked={value === 'true'} required={field.required} /> Yes
      </label>
      <label class="choice">
        <input type="radio" name={name} value="false" checked={value === 'false'} /> No
      </label>
    </fieldset>
  );
}

function SelectControl({ field, name, id, label, notes, aria, posted }: ControlProps<'select'>) {
  const value = posted ? posted[0] : field.value;
  return (
    <>
      <label for={id}>{label}</label>
      {notes}
      <select id={id} name={name} required={field.required} {...aria}>
        <option value="">Choose…</option>
        {field.choices.map((choice) => (
          <option value={choice.value} selected={choice.value === value}>
            {choice.label}
          </option>
        ))}
      </select>
    </>
  );
}

function MultiControl({ field, name, id, label, notes, aria, posted }: ControlProps<'multi'>) {
  const values = posted ?? field.values;
  const bounds = [
    field.minItems === undefined ? '' : `at least ${field.minItems}`,
    field.maxItems === undefined ? '' : `at most ${field.maxItems}`,
  ]
    .filter(Boolean)
    .join(', ');
  return (
    <fieldset {...aria}>
      <legend>
        {label}
        {bounds ? ` (choose ${bounds})` : ''}
      </legend>
      {notes}
      {field.choices.map((choice, i) => (
        <label class="choice">
          <input type="checkbox" {...(i === 0 ? { id } : {})} name={name} value={choice.value} checked={values.includes(choice.value)} />{' '}
          {choice.label}
        </label>
      ))}
    </fieldset>
  );
}

function NumberControl({ field, name, id, label, notes, aria, posted }: ControlProps<'number'>) {
  const value = posted ? posted[0] : field.value === undefined ? undefined : String(field.value);
  return (
    <>
      <label for={id}>{label}</label>
      {notes}
      <input
        type="number"
        id={id}
        name={name}
        step={field.integer ? '1' : 'any'}
        min={field.min}
        max={field.max}
        value={value}
        required={field.required}
        {...aria}
      />
    </>
  );
}

function TextControl({ field, name, id, label, notes, aria, posted }: ControlProps<'text'>) {
  const given = posted ? posted[0] : field.value;
  // A date-time default (RFC 3339) as the browser's date-time input takes it: minutes, no offset.
  const value = field.inputType === 'datetime-local' && given && !posted ? given.slice(0, 16) : given;
  return (
    <>
      <label for={id}>
        {label}
        {field.inputType === 'datetime-local' ? ' (UTC)' : ''}
      </label>
      {notes}
      <input
        type={field.inputType}
        id={id}
        name={name}
        minlength={field.minLength}
        maxlength={field.maxLength}
        value={value}
        required={field.required}
        {...aria}
      />
    </>
  );
}

function JsonControl({ field, name, id, label, notes, aria, posted }: ControlProps<'json'>) {
  return (
    <>
      <label for={id}>{label} (JSON)</label>
      {notes}
      <textarea id={id} name={name} required={field.required} {...aria}>
        {posted ? posted[0] : field.value}
      </textarea>
    </>
  );
}

/** Who decided the task's questions for a person (the page's script keeps the list current; hidden while empty). */
export function DecidedBy(props: { nodes: readonly UiNode[] }) {
  return (
    <section id="decisions" hidden={props.nodes.length === 0}>
      <h2>Decided by</h2>
      <ul id="decision-list">
        <Nodes nodes={props.nodes} />
      </ul>
    </section>
  );
}
