/**
 * Redaction of credentials from what agents read back, with real-shaped fake tokens (built at run time). The
 * streaming tests split the output at every byte and read it in every chunk size an agent may ask for: what the agent
 * assembles is always the redacted text, and no piece of a secret ever shows.
 */
import * as assert from 'node:assert/strict';
import { readRedacted } from '../../src/core/process/redactedRead';
import { RingBuffer } from '../../src/core/process/ringBuffer';
import type { Found } from '../../src/core/secretRedactor';
import { SECRET_RULES_FOR_TESTS, SecretRedactor, marker } from '../../src/core/secretRedactor';
import { fakeAwsSecret, fakePrivateKey, fakeSecrets } from './helpers/fakeSecrets';

const enc = new TextEncoder();
const dec = new TextDecoder();
const redactor = (values: string[] = [], own: string[] = [], enabled = true): SecretRedactor => new SecretRedactor({ enabled: () => enabled, values: () => values, ownTokens: () => own });

/** Every 4-character piece of `secret`: none may appear in what the agent sees. */
function pieces(secret: string): string[] {
  const out: string[] = [];
  for (let i = 0; i + 8 <= secret.length; i += 4) out.push(secret.slice(i, i + 8));
  return out;
}

function assertHidden(text: string, secret: string, where: string): void {
  for (const p of pieces(secret)) assert.ok(!text.includes(p), `${where}: a piece of the secret (${p}) shows in ${JSON.stringify(text.slice(0, 300))}`);
}

/**
 * An agent reading output that arrives in `writes`: it reads after each write (the process still running) from its
 * cursor with `max` bytes at a time until nothing more comes, then once more after the exit until eof.
 */
function agentReads(r: SecretRedactor, writes: Uint8Array[], max: number, capacity = 1 << 20): string {
  const ring = new RingBuffer(capacity);
  let cursor = 0;
  let seen = '';
  const drain = (final: boolean): void => {
    for (let i = 0; i < 100_000; i++) {
      const got = readRedacted(ring, cursor, max, final, r);
      seen += dec.decode(got.chunk);
      const moved = got.cursor !== cursor;
      cursor = got.cursor;
      if (!moved && got.chunk.length === 0) return;
      if (final && cursor >= ring.end) return;
    }
    assert.fail('the reads made no progress');
  };
  for (const w of writes) {
    ring.write(w);
    drain(false);
  }
  drain(true);
  return seen;
}

describe('secret redaction', () => {
  const secrets = fakeSecrets();

  for (const [name, secret] of Object.entries(secrets)) {
    const kind = name === 'github-pat' ? 'github-token' : name;
    it(`${name}: redacted as ${marker(kind)} in a line, with its neighbours kept`, () => {
      const text = `export TOKEN=${secret}\nnext line`;
      assert.equal(redactor().redactText(text), `export TOKEN=${marker(kind)}\nnext line`);
      assert.equal(redactor().redactText(`"${secret}"`), `"${marker(kind)}"`);
    });
  }

  it('an AWS secret access key after its name; a private key block, also JSON-escaped (GCP service account)', () => {
    const aws = fakeAwsSecret();
    assert.equal(redactor().redactText(aws.line), `aws_secret_access_key = ${marker('aws-secret-access-key')}`);
    const key = fakePrivateKey();
    assert.equal(redactor().redactText(`key:\n${key.pem}\ndone`), `key:\n${marker('private-key')}\ndone`);
    const json = redactor().redactText(key.json);
    assert.equal(json, `{"type": "service_account", "private_key": "${marker('private-key')}\\n", "client_email": "x@y.iam.gserviceaccount.com"}`);
  });

  it('our own tokens and the operator\'s listed values, wherever they appear', () => {
    const own = 'tok_' + 'Zq9'.repeat(10);
    const r = redactor(['hunter2-but-longer'], [own]);
    assert.equal(r.redactText(`Authorization=${own}; pw=hunter2-but-longer.`), `Authorization=${marker('codespace-token')}; pw=${marker('listed-value')}.`);
    assert.equal(redactor(['abc']).redactText('abc'), 'abc', 'values under 6 characters are not redacted');
  });

  it('leaves ordinary text alone (hashes, UUIDs, base64, prose, short sk- words, version strings)', () => {
    const ordinary = [
      'commit 3f786850e387550fdab836ed7e6dc881de23001b',
      'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855',
      'id 123e4567-e89b-12d3-a456-426614174000',
      'a Bearer token is sent in the header',
      'task-runner sk-learn sklearn ask-me',
      'AKIA is how AWS key ids start',
      'data: SGVsbG8gd29ybGQgdGhpcyBpcyBiYXNlNjQgdGV4dA==',
      'npm_config_cache=/tmp/npm', 'ghp_short', 'node v20.11.1 (x64)',
    ];
    for (const line of ordinary) assert.equal(redactor().redactText(line), line);
  });

  it('is off when the setting says so', () => {
    assert.equal(redactor([], [], false).redactText(secrets['github-token'] as string), secrets['github-token']);
  });

  it('output of every byte value around the secrets keeps its bytes; only the secrets are replaced', () => {
    // Detection reads bytes one character per byte: every byte value must map to one character, so offsets stay exact.
    const everyByte = Uint8Array.from({ length: 256 }, (_, i) => i);
    const parts: Uint8Array[] = [];
    const expected: Uint8Array[] = [];
    for (const [kind, secret] of Object.entries(secrets)) {
      parts.push(everyByte, enc.encode(` ${secret}\n`), everyByte.slice().reverse());
      expected.push(everyByte, enc.encode(` ${marker(kind === 'github-pat' ? 'github-token' : kind)}\n`), everyByte.slice().reverse());
    }
    const window = Buffer.concat(parts);
    const out = redactor().redactRange(window, 0, 0, window.length, { atEnd: true, final: true });
    assert.equal(out.stop, window.length);
    assert.deepEqual(Buffer.from(out.chunk), Buffer.concat(expected));
  });

  it('a line cut short mid-token (search\'s 500 characters) hides the cut piece', () => {
    const gh = secrets['github-token'] as string;
    const cut = `x = ${gh.slice(0, 20)}`;
    assert.equal(redactor().redactText(cut, { cut: true }), `x = ${marker('truncated')}`);
    assert.equal(redactor().redactText('plain text cut here', { cut: true }), 'plain text cut here');
  });

  describe('command output, streamed', () => {
    const all: [string, string][] = [...Object.entries(secrets), ['aws', fakeAwsSecret().key], ['pem', fakePrivateKey().pem]];
    const lineOf = (name: string, s: string): string => (name === 'aws' ? fakeAwsSecret().line : s);

    for (const [name, secret] of all) {
      it(`${name}: split at every byte across two writes, read in chunks of 1, 7, 64 and 4096 bytes`, () => {
        const r = redactor();
        const text = `before ${lineOf(name, secret)} after\n`;
        const want = r.redactText(text);
        assert.notEqual(want, text);
        const bytes = enc.encode(text);
        const step = name === 'pem' ? 37 : 1;
        for (let k = 1; k < bytes.length; k += step) {
          for (const max of name === 'pem' ? [64, 4096] : [1, 7, 64, 4096]) {
            const seen = agentReads(r, [bytes.subarray(0, k), bytes.subarray(k)], max);
            assert.equal(seen, want, `split at ${k}, max ${max}`);
          }
        }
      });
    }

    it('a token dribbled one byte per write never shows a piece, and the cursor counts raw bytes', () => {
      const r = redactor();
      const gh = secrets['github-token'] as string;
      const text = `start ${gh} end`;
      const bytes = enc.encode(text);
      const seen = agentReads(r, Array.from(bytes, (b) => Uint8Array.of(b)), 4096);
      assert.equal(seen, `start ${marker('github-token')} end`);
      assertHidden(seen, gh, 'dribbled');
      // Raw cursors: a read from the cursor just past the token starts at " end".
      const ring = new RingBuffer(1 << 16);
      ring.write(bytes);
      const after = readRedacted(ring, 6 + gh.length, 100, true, r);
      assert.equal(dec.decode(after.chunk), ' end');
      assert.equal(after.cursor, bytes.length);
      // A cursor inside the token (an agent may pass any) shows none of it either.
      const inside = readRedacted(ring, 10, 100, true, r);
      assert.equal(dec.decode(inside.chunk), `${marker('github-token')} end`);
    });

    it('the same cursor gives the same text once the output is complete', () => {
      const r = redactor();
      const ring = new RingBuffer(1 << 16);
      ring.write(enc.encode(`a ${secrets['npm-token']} b ${secrets['openai-key']} c\n`));
      for (let cursor = 0; cursor < ring.end; cursor += 3) {
        const one = readRedacted(ring, cursor, 10, true, r);
        const two = readRedacted(ring, cursor, 10, true, r);
        assert.deepEqual(one, two);
      }
    });

    it('output held back while it may be a secret is released as it is at the exit', () => {
      const r = redactor();
      const ring = new RingBuffer(1 << 16);
      ring.write(enc.encode('prompt gh'));
      assert.equal(dec.decode(readRedacted(ring, 0, 100, false, r).chunk), 'prompt ');
      assert.equal(dec.decode(readRedacted(ring, 0, 100, true, r).chunk), 'prompt gh');
    });

    it('disabled: the read is the ring\'s own', () => {
      const ring = new RingBuffer(1 << 16);
      ring.write(enc.encode(`x ${secrets['github-token']}`));
      assert.deepEqual(readRedacted(ring, 0, 100, false, redactor([], [], false)), ring.read(0, 100));
    });
  });
});

describe('secret redaction: the literal filter changes nothing', () => {
  /** What find and heldTail gave before the filter: every rule's expressions over the whole text. */
  function fullFind(text: string): Found[] {
    const all: Found[] = [];
    for (const rule of SECRET_RULES_FOR_TESTS) {
      rule.pattern.lastIndex = 0;
      for (const m of text.matchAll(rule.pattern)) {
        const s = m.groups?.s;
        const from = s !== undefined ? (m.index as number) + m[0].lastIndexOf(s) : (m.index as number);
        all.push({ from, to: from + (s ?? m[0]).length, kind: rule.kind });
      }
    }
    all.sort((a, b) => a.from - b.from || b.to - a.to);
    const kept: Found[] = [];
    for (const f of all) if (kept.length === 0 || f.from >= (kept[kept.length - 1] as Found).to) kept.push(f);
    return kept;
  }
  function fullTail(text: string): number | undefined {
    let at: number | undefined;
    for (const rule of SECRET_RULES_FOR_TESTS) {
      const m = rule.tail?.exec(text);
      if (m && m[0].length > 0) at = at === undefined ? m.index : Math.min(at, m.index);
    }
    return at;
  }

  it('finds the same secrets and holds back the same tails as the expressions over the whole text, on 4,000 generated texts and every prefix of some', () => {
    const secrets = fakeSecrets();
    const fragments = [
      ...Object.values(secrets),
      fakeAwsSecret().line,
      fakePrivateKey().pem,
      fakePrivateKey().json,
      'sk-ant-', 'sk-', 'sk-proj-', 'ghp_', 'github_pat_', 'glpat-', 'npm_', 'pypi-', 'xoxb-', 'sk_live_', 'AIza', 'AKIA',
      'eyJ', 'ey', 'e', '.', 'Bearer ', 'bearer ', 'aws_secret_access_key = ', 'AWS_SECRET_ACCESS_KEY: "', 'Aws',
      '-----BEGIN RSA PRIVATE KEY-----\n', '-----END RSA PRIVATE KEY-----', '--BEGIN X', '---BEGI', '-----', '"private_key_id": "',
      ' ', '\n', '"', '=', ':', '-', '_', '/', '+',
    ];
    let seed = 0x2f6b1d;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const alnum = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
    const r = redactor();
    for (let i = 0; i < 4000; i++) {
      let text = '';
      const parts = 1 + rand(8);
      for (let k = 0; k < parts; k++) {
        if (rand(3) === 0) {
          const n = rand(70);
          for (let j = 0; j < n; j++) text += alnum[rand(alnum.length)];
        } else {
          text += fragments[rand(fragments.length)];
        }
      }
      const cuts = i % 50 === 0 ? Array.from({ length: text.length + 1 }, (_, j) => j) : [text.length, rand(text.length + 1)];
      for (const cut of cuts) {
        const t = text.slice(0, cut);
        assert.deepEqual(r.find(t), fullFind(t), `find, ${JSON.stringify(t)}`);
        assert.equal(r.heldTail(t), fullTail(t), `heldTail, ${JSON.stringify(t)}`);
      }
    }
  });
});
