/**
 * The local states module's loading and look-up (`bin/local/local-states.ts`):
 * which file, what runs each Task state (the state's name first, then a
 * Lambda state's function, then the resource), and the causes a state
 * without a handler fails with: the file missing, failing to load, or
 * holding no key for the state.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type LocalStatesModule,
  loadLocalStates,
  localStatesFile,
  PROJECT_LOCAL_STATES,
  REPOSITORY_LOCAL_STATES,
} from '../../../bin/local/local-states.ts';
import type { LogEvent } from '../../../shared/log.ts';

const RECEIVER = 'arn:aws:lambda:us-east-1:000000000000:function:workflow-receiver';
const OWN = 'arn:aws:lambda:us-east-1:123456789012:function:own';
const SNS = 'arn:aws:states:::sns:publish';
const INVOKE = 'arn:aws:states:::lambda:invoke';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'local-states-unit-'));
});
after(() => rm(dir, { recursive: true, force: true }));

/** Writes `source` as a module of the temporary folder and loads it as the local states module. */
async function load(name: string, source: string | undefined): Promise<{ states: LocalStatesModule; logs: LogEvent[] }> {
  const file = join(dir, name);
  if (source !== undefined) await writeFile(file, source);
  const logs: LogEvent[] = [];
  const states = await loadLocalStates({ file, functions: [RECEIVER], log: (event) => void logs.push(event) });
  return { states, logs };
}

describe('localStatesFile', () => {
  it('is the variable’s, else the project’s for given tools, else this repository’s', () => {
    assert.equal(localStatesFile({ TASKS_LOCAL_STATES: 'flows/local.ts' }, true), 'flows/local.ts');
    assert.equal(localStatesFile({ TASKS_LOCAL_STATES: '' }, true), PROJECT_LOCAL_STATES);
    assert.equal(PROJECT_LOCAL_STATES, 'src/local-states.ts');
    assert.equal(localStatesFile({}, false), REPOSITORY_LOCAL_STATES);
  });
});

describe('loadLocalStates', () => {
  let states: LocalStatesModule;
  let logs: LogEvent[];
  before(async () => {
    await writeFile(join(dir, 'own.ts'), 'export const handler = async (event: unknown, context: object) => ({ own: event, context });\n');
    ({ states, logs } = await load(
      'states.ts',
      `export default {
        Notify: async () => 'by name',
        '${SNS}': async () => 'by resource',
        '${OWN}': ${JSON.stringify(join(dir, 'own.ts'))},
        '${RECEIVER}': async () => 'never: the receiver runs as a function',
        Odd: 42,
      };\n`,
    ));
  });

  const handlerOf = async (state: Parameters<LocalStatesModule['route']>[0]) => {
    const route = states.route(state);
    assert.equal(route.run, 'handler', JSON.stringify(route));
    return route.run === 'handler' ? route.handler({}, { stateName: state.stateName, resource: state.resource }) : undefined;
  };

  it('runs a state by its name first, whatever its resource or function', async () => {
    assert.equal(await handlerOf({ stateName: 'Notify', resource: SNS }), 'by name');
    assert.equal(await handlerOf({ stateName: 'Notify', resource: INVOKE, functionName: RECEIVER }), 'by name');
  });

  it('runs a Lambda state by its function when the function runs here or has a key, else by its resource', async () => {
    assert.deepEqual(states.route({ stateName: 'Ask', resource: INVOKE, functionName: RECEIVER }), { run: 'function' });
    assert.deepEqual(states.route({ stateName: 'Call', resource: INVOKE, functionName: OWN }), { run: 'function' });
    assert.equal(await handlerOf({ stateName: 'Publish', resource: SNS }), 'by resource');
    const own = states.functionHandler(OWN);
    assert.ok(own, 'the function’s key names a module');
    assert.deepEqual(await own({ a: 1 }, { stateName: 'Call', resource: INVOKE }), {
      own: { a: 1 },
      context: { stateName: 'Call', resource: INVOKE },
    });
    assert.equal(states.functionHandler('arn:aws:lambda:us-east-1:123456789012:function:other'), undefined);
  });

  it('names the state, its resource and function, and the file for a state with no key', () => {
    const route = states.route({ stateName: 'Other', resource: INVOKE, functionName: 'other-fn' });
    assert.deepEqual(route, {
      run: 'none',
      cause: `No local handler runs the state 'Other' (${INVOKE}, function other-fn): add one to ${join(dir, 'states.ts')}, keyed by the state's name or its resource`,
    });
  });

  it('names a key that is neither a handler nor a module path', () => {
    assert.deepEqual(states.route({ stateName: 'Odd', resource: SNS }), {
      run: 'none',
      cause: `Odd in ${join(dir, 'states.ts')}: is neither a handler nor a module path`,
    });
  });

  it('logs that it loaded the file, with the number of keys', () => {
    assert.deepEqual(logs, [{ event: 'local-states-loaded', file: join(dir, 'states.ts'), keys: 5 }]);
  });

  it('says to create the file when there is none', async () => {
    const { states: none, logs: quiet } = await load('absent.ts', undefined);
    const route = none.route({ stateName: 'Publish', resource: SNS });
    assert.equal(route.run, 'none');
    assert.ok(route.run === 'none' && route.cause.includes(`add one to ${join(dir, 'absent.ts')} (create the file)`));
    assert.deepEqual(quiet, []);
  });

  it('names the load failure of a file that throws, or whose default export is not an object', async () => {
    const { states: broken, logs: failed } = await load('broken.ts', "throw new TypeError('boom');\nexport default {};\n");
    const route = broken.route({ stateName: 'Publish', resource: SNS });
    assert.deepEqual(route, {
      run: 'none',
      cause: `No local handler runs the state 'Publish' (${SNS}): ${join(dir, 'broken.ts')} failed to load (TypeError: boom)`,
    });
    assert.deepEqual(failed, [{ event: 'local-states-failed', file: join(dir, 'broken.ts'), error: 'TypeError: boom' }]);
    const { states: list } = await load('list.ts', 'export default [];\n');
    const listed = list.route({ stateName: 'Publish', resource: SNS });
    assert.ok(listed.run === 'none' && listed.cause.includes('its default export is not an object of handlers'), JSON.stringify(listed));
  });
});
