/** The console's pure parts: forms from a schema and back, what a page shows of a result, where sign-in may lead, the sealed cookies, the modes. */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { formContent, formFields } from '../../../shared/console/forms.ts';
import { consoleMode, listingOf } from '../../../shared/console/mode.ts';
import { newFormToken, seal, unseal } from '../../../shared/console/session.ts';
import { safeNext } from '../../../shared/console/sign-in.ts';
import { mediaSrc, resultView, safeHref } from '../../../shared/console/view.ts';
import { purposeKeys } from '../../../shared/keys.ts';

const SCHEMA = {
  type: 'object',
  properties: {
    name: { type: 'string', title: 'Name', minLength: 1, maxLength: 5 },
    email: { type: 'string', format: 'email' },
    when: { type: 'string', format: 'date-time' },
    team: { type: 'integer', minimum: 1, default: 5 },
    ratio: { type: 'number' },
    remote: { type: 'boolean', default: true },
    plan: { type: 'string', oneOf: [{ const: 'a', title: 'Plan A' }], default: 'a' },
    legacy: { type: 'string', enum: ['x', 'y'], enumNames: ['Ex', 'Why'] },
    langs: { type: 'array', items: { anyOf: [{ const: 'ts', title: 'TypeScript' }] }, minItems: 1 },
    other: { type: 'object' },
  },
  required: ['name', 'plan'],
};

describe('console forms', () => {
  it('builds one field per property, with its kind, bounds, choices, default and whether it is required', () => {
    const fields = Object.fromEntries(formFields(SCHEMA).map((field) => [field.name, field]));
    assert.deepEqual(fields['name'], {
      name: 'name',
      label: 'Name',
      required: true,
      control: 'text',
      inputType: 'text',
      minLength: 1,
      maxLength: 5,
    });
    assert.equal(fields['email']?.control === 'text' && fields['email'].inputType, 'email');
    assert.equal(fields['when']?.control === 'text' && fields['when'].inputType, 'datetime-local');
    assert.deepEqual(fields['team'], { name: 'team', label: 'team', required: false, control: 'number', integer: true, min: 1, value: 5 });
    assert.deepEqual(fields['plan'], {
      name: 'plan',
      label: 'plan',
      required: true,
      control: 'select',
      choices: [{ value: 'a', label: 'Plan A' }],
      value: 'a',
    });
    assert.deepEqual(fields['legacy']?.control === 'select' && fields['legacy'].choices, [
      { value: 'x', label: 'Ex' },
      { value: 'y', label: 'Why' },
    ]);
    assert.equal(fields['langs']?.control, 'multi');
    assert.equal(fields['remote']?.control === 'boolean' && fields['remote'].value, true);
    assert.equal(fields['other']?.control, 'json');
  });

  it('types a posted form as the schema says, leaves empty fields out and keeps what does not parse', () => {
    const content = formContent(formFields(SCHEMA), {
      'field.name': 'Ada',
      'field.email': '',
      'field.when': '2027-01-02T03:04',
      'field.team': '12',
      'field.ratio': 'lots',
      'field.remote': 'false',
      'field.plan': 'a',
      'field.langs': ['ts'],
      'field.other': '{"a":1}',
      token: 'not a field',
    });
    assert.deepEqual(content, {
      name: 'Ada',
      when: '2027-01-02T03:04:00Z',
      team: 12,
      ratio: 'lots',
      remote: false,
      plan: 'a',
      langs: ['ts'],
      other: { a: 1 },
    });
  });
});

describe('what a page shows of a result', () => {
  it('links http(s) only, media as data: URLs of an image or audio type only', () => {
    assert.equal(safeHref('https://example.com/a?b'), 'https://example.com/a?b');
    for (const target of ['javascript:alert(1)', 'JAVASCRIPT:alert(1)', 'data:text/html,x', '/relative', 'vbscript:x', 42]) {
      assert.equal(safeHref(target), undefined, String(target));
    }
    assert.equal(mediaSrc('image', 'image/png', 'iVBORw0K'), 'data:image/png;base64,iVBORw0K');
    assert.equal(mediaSrc('image', 'image/svg+xml', 'PHN2Zz4='), undefined);
    assert.equal(mediaSrc('image', 'image/png', 'not base64!'), undefined);
    assert.equal(mediaSrc('audio', 'image/png', 'iVBORw0K'), undefined);
    const view = resultView({
      content: [
        { type: 'resource_link', uri: 'javascript:alert(1)', name: 'x' },
        { type: 'image', data: 'PHN2Zz4=', mimeType: 'image/svg+xml' },
      ],
      isError: true,
    });
    assert.deepEqual(view, {
      isError: true,
      blocks: [
        { kind: 'link', text: 'x', target: 'javascript:alert(1)' },
        { kind: 'text', text: '[image of type image/svg+xml: not shown]' },
      ],
    });
  });
});

describe('where sign-in may lead', () => {
  it('to a path under /console of this origin only', () => {
    assert.equal(safeNext('/console/tasks/abc?x=1'), '/console/tasks/abc?x=1');
    assert.equal(safeNext('/console'), '/console');
    for (const next of [
      'https://evil.example/console',
      '//evil.example/console',
      '/console/../evil',
      '/\\evil.example',
      '/consolex',
      '/console/callback',
      '/console/sign-in',
      '/console\u0000',
      undefined,
      '',
    ]) {
      assert.equal(safeNext(next), '/console', String(next));
    }
  });
});

describe('sealed cookies', () => {
  const keys = purposeKeys(async () => randomBytes(32));
  it('open for their own purpose only, and not once tampered with or expired', async () => {
    const session = { kind: 'person' as const, principal: 'jwt|1|i|1|s', formToken: newFormToken(), name: 'Ada', sid: 'x1', startedAt: 5 };
    const sealed = await seal(keys, 'console-session', session, 60);
    assert.deepEqual(await unseal(keys, 'console-session', sealed), session);
    assert.equal(await unseal(keys, 'console-sign-in', sealed), undefined, 'a session is no sign-in state');
    const state = await seal(keys, 'console-sign-in', { state: 's', nonce: 'n', verifier: 'v', next: '/console' }, 60);
    assert.equal(await unseal(keys, 'console-session', state), undefined, 'a sign-in state is no session');
    const tampered = `${sealed.slice(0, -4)}AAAA`;
    assert.equal(await unseal(keys, 'console-session', tampered), undefined);
    assert.equal(await unseal(keys, 'console-session', await seal(keys, 'console-session', session, -1)), undefined);
    assert.equal(await unseal(keys, 'console-session', 'garbage'), undefined);
    const otherKeys = purposeKeys(async () => randomBytes(32));
    assert.equal(await unseal(otherKeys, 'console-session', sealed), undefined, "another stack's secret");
  });
});

describe('console modes', () => {
  const base = { console: 'by-id' as const, localPrincipal: 'local' };
  it('follow the configuration, and list tasks exactly where a console lists them', () => {
    assert.deepEqual(consoleMode(base), { kind: 'by-id' });
    assert.deepEqual(consoleMode({ ...base, console: 'open' }), { kind: 'open' });
    assert.deepEqual(consoleMode({ ...base, consoleIssuer: 'https://i', consoleClientId: 'c' }), {
      kind: 'sign-in',
      issuer: 'https://i',
      clientId: 'c',
    });
    assert.deepEqual(consoleMode({ ...base, consoleIssuer: 'https://i' }), { kind: 'off' });
    assert.equal(listingOf(base), undefined);
    assert.deepEqual(listingOf({ ...base, console: 'open' }), { sharedOwner: 'local' });
    assert.deepEqual(listingOf({ ...base, consoleClientId: 'c' }), { sharedOwner: 'local' });
  });
});
