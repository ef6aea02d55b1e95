/** The request id of a body too deep to parse (`topLevelId` in `shared/json-depth.ts`), read by a scan. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { topLevelId } from '../../shared/json-depth.ts';

const deep = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('topLevelId', () => {
  it('reads a number or string id before or after a value nested 100,000 deep', () => {
    assert.equal(topLevelId(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":${deep(100_000)}}`), 42);
    assert.equal(topLevelId(`{ "params" : {"a":${deep(100_000)}, "id": 9} , "id" : "req-\\"7\\"" }`), 'req-"7"');
    assert.equal(topLevelId(`{"id":-1.5e3}`), -1500);
  });

  it('ignores ids inside nested values, strings that look like keys, and escapes in keys', () => {
    assert.equal(topLevelId(`{"params":{"id":5},"x":"\\"id\\":6"}`), null);
    assert.equal(topLevelId(`{"\\u0069d":3,"p":[]}`), 3);
    assert.equal(topLevelId(`{"id":1,"id":2}`), 2, 'the last of repeated members, as JSON.parse reads them');
  });

  it('is null where JSON-RPC has no id to answer with', () => {
    for (const text of [deep(10), `{"id":null}`, `{"id":{"a":1}}`, `{"id":[1]}`, `{"id":true}`, '', 'id', `{"id" 1}`, `{"id":`]) {
      assert.equal(topLevelId(text), null, text);
    }
  });

  it('keeps what it read before a malformed part', () => {
    assert.equal(topLevelId(`{"id":7,"params":[[[`), 7);
    assert.equal(topLevelId(`{"id":7 "params":1}`), 7);
  });
});
