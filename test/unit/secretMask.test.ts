import * as assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { SecretMask } from '../../src/base/secretMask';

describe('log masking', () => {
  const token = randomBytes(32).toString('base64url');
  const mask = new SecretMask();
  mask.add(token);

  it('hides a registered token wherever it appears', () => {
    const out = mask.apply(`started with ${token} and again ${token}.`);
    assert.ok(!out.includes(token));
    assert.equal(out, 'started with «secret» and again «secret».');
  });

  it('hides bearer and basic credentials, even unregistered ones', () => {
    const out = mask.apply('Authorization: Bearer abcdefghijklmnop; authorization: basic dXNlcjpwYXNz');
    assert.ok(!out.includes('abcdefghijklmnop'));
    assert.ok(!out.includes('dXNlcjpwYXNz'));
  });

  it('hides session ids and tokens in query strings', () => {
    const out = mask.apply('mcp-session-id: 0f8fad5b-d9cb-469f-a165-70867728950e GET /mcp?token=zzzzzzzzzz&x=1');
    assert.ok(!out.includes('0f8fad5b-d9cb-469f-a165-70867728950e'));
    assert.ok(!out.includes('zzzzzzzzzz'));
    assert.ok(out.includes('&x=1'));
  });

  it('leaves ordinary text alone and ignores too-short secrets', () => {
    const m = new SecretMask();
    m.add('abc');
    assert.equal(m.apply('abc is fine'), 'abc is fine');
  });
});
