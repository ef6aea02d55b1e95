import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parsePrincipal, principalFor } from '../../../shared/auth/principal.ts';

describe('principalFor', () => {
  it('tells apart pairs that naive joining would merge', () => {
    const pairs: Array<[string, string]> = [
      ['https://a.example', 'b|c'],
      ['https://a.example|b', 'c'],
      ['https://a.example', '5|x'],
      ['https://a.example/', 'alice'],
      ['https://a.example', '/alice'],
      ['', 'https://a.example|alice'],
      ['https://a.example', 'alice\u0000x'],
      ['https://a.example', 'alice'],
      ['https://b.example', 'alice'],
    ];
    const encoded = pairs.map(([issuer, subject]) => principalFor(issuer, subject));
    assert.equal(new Set(encoded).size, pairs.length, encoded.join('\n'));
  });

  it('round-trips through parsePrincipal, whatever the characters', () => {
    for (const [issuer, subject] of [
      ['https://i.example', 'x|y|3|z'],
      ['', 's'],
      ['https://i.example/tenant|1', '0|'],
    ] as const) {
      assert.deepEqual(parsePrincipal(principalFor(issuer, subject)), { issuer, subject });
    }
  });

  it('is self-delimiting: no principal is a prefix-extension of another followed by a separator', () => {
    // The idempotency scope is `${principal}\0${key}`: a different principal must not produce the same scope.
    const a = `${principalFor('https://i.example', 'a')}\u0000b\u0000k`;
    const b = `${principalFor('https://i.example', 'a\u0000b')}\u0000k`;
    assert.notEqual(a, b);
    assert.equal(parsePrincipal(`${principalFor('https://i.example', 'a')}x`), undefined);
  });

  it('refuses a missing subject rather than mapping it to a shared principal', () => {
    assert.throws(() => principalFor('https://i.example', ''), /subject/);
  });

  it('never looks like a bare subject or the local principal', () => {
    for (const legacy of ['alice', 'local', '1234-5678']) assert.equal(parsePrincipal(legacy), undefined);
  });
});
