/**
 * Redaction of credentials from what agents read back, with real-shaped fake tokens (built at run time). The
 * streaming tests split the output at every byte and read it in every chunk size an agent may ask for: what the agent
 * assembles is always the redacted text, and no piece of a secret ever shows.
 */
import * as assert from 'node:assert/strict';
import { readRedacted } from '../../src/features/processes/common/redactedRead';
import { RingBuffer } from '../../src/features/processes/common/ringBuffer';
import type { Found } from '../../src/base/secretRedactor';
import { SECRET_RULES_FOR_TESTS, SecretRedactor, marker } from '../../src/base/secretRedactor';
import { fakeAwsSecret, fakeAwsStsJson, fakePgpPrivateKey, fakePrivateKey, fakeSecrets } from './helpers/fakeSecrets';
import { shownText } from '../../src/base/shownText';

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

/** What a terminal would show of `text` (the same reading the redactor uses). */
function shown(text: string): string {
  return shownText(text)?.text ?? text;
}

/** Bytes as the redactor reads them (one character per byte) and back. */
const latin1 = (text: string): string => Buffer.from(text, 'utf8').toString('latin1');

/** Escape sequences and controls a terminal does not display: each may sit between any two characters of a secret. */
const ESCAPES: Record<string, string> = {
  'grep match colour': '\x1b[01;31m\x1b[K',
  'colour reset': '\x1b[m\x1b[K',
  'SGR reset 0': '\x1b[0m',
  'SGR 256 colours': '\x1b[38;5;208m',
  'SGR truecolour, colon form': '\x1b[38:2::255:100:0m',
  'cursor forward': '\x1b[1C',
  'cursor position': '\x1b[12;40H',
  'private mode (hide cursor)': '\x1b[?25l',
  'OSC 8 hyperlink, ST': '\x1b]8;;https://example.test/a?b=c\x1b\\',
  'OSC 8 hyperlink end, BEL': '\x1b]8;;\x07',
  'OSC title': '\x1b]0;build: step 3\x07',
  'DCS': '\x1bPq#0;2;0;0;0\x1b\\',
  'charset designation': '\x1b(B',
  'save cursor': '\x1b7',
  'keypad mode': '\x1b=',
  'C1 CSI (U+009B as UTF-8)': '\xc2\x9b1;32m',
  'C1 OSC hyperlink with C1 ST': '\xc2\x9d8;;https://x.test/\xc2\x9c',
  'C1 control alone (U+0085)': '\xc2\x85',
  'BEL': '\x07',
  'NUL': '\x00',
  'SI and SO': '\x0f\x0e',
  'DEL': '\x7f',
  'several': '\x1b[0m\x1b[K\x1b]8;;\x1b\\\x1b[1;33m',
};

describe('secret redaction: what a terminal shows (escape sequences inside a secret)', () => {
  const r = redactor();
  const aws = fakeAwsSecret();
  const shapes: Record<string, { text: string; secret: string; kind: string }> = {
    ...Object.fromEntries(Object.entries(fakeSecrets()).map(([name, secret]) => [name, { text: secret, secret, kind: name === 'github-pat' ? 'github-token' : name }])),
    'aws secret after its name': { text: aws.line, secret: aws.key, kind: 'aws-secret-access-key' },
    'bearer credential': { text: `Authorization: Bearer ${'Zx9'.repeat(10)}`, secret: 'Zx9'.repeat(10), kind: 'bearer-token' },
  };

  it('shownText hides escapes and controls, keeps text, tabs, newlines and UTF-8 (whose bytes include 0x80-0x9f and C2), and maps back', () => {
    const text = latin1('a\x1b[31mb\x1b]8;;u\x1b\\c\x07d\te\n“f”\r\x0bg');
    const view = shownText(text);
    assert.ok(view);
    assert.equal(view.text, latin1('abcd\te\n“f”\r\x0bg'));
    for (let i = 0; i < view.text.length; i++) assert.equal(text[view.originalIndex(i)], view.text[i], `shown ${i}`);
    assert.equal(shownText(latin1('plain “UTF-8” — ✔ 20 °C, 5 µs, ©\xa0text\n\tend')), undefined);
    // A lone byte 0x9b (invalid UTF-8: a terminal shows a replacement character) is no CSI.
    assert.equal(shownText('a\x9b31mb'), undefined);
    assert.equal(shownText(latin1('a\u009b31mb\u0085c'))?.text, 'abc');
    assert.equal(shownText(''), undefined);
    // Unfinished sequences at the end are hidden to the end (more may come).
    for (const end of ['\x1b', '\x1b[', '\x1b[01;3', '\x1b]8;;http://x', '\xc2\x9b3', '\xc2']) assert.equal(shownText(`ab${end}`)?.text, 'ab', JSON.stringify(end));
  });

  it('shownText: escape-only text (one replace, mapped when asked) and text with other controls (one pass) agree, on 3,000 generated texts', () => {
    const fragments = [...Object.values(ESCAPES), 'ab', 'Z', '9', ' ', '\n', '\x1b', '\x1b[', '\x1b]8;;u', '\x1b\\', '\xc2', '\xc2\xb0', '\x07', '[', ']', 'm', '\\'];
    let seed = 0x5eed;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    for (let k = 0; k < 3000; k++) {
      let text = '';
      for (let n = 1 + rand(12); n > 0; n--) text += fragments[rand(fragments.length)];
      const view = shownText(text);
      const shownChars = view?.text ?? text;
      for (let i = 0; i < shownChars.length; i++) assert.equal(text[view ? view.originalIndex(i) : i], shownChars[i], `${JSON.stringify(text)} at ${i}`);
      // A NUL before it forces the one-pass reading of the same text: the same shown characters, the same map.
      const forced = shownText(`\x00${text}`);
      assert.equal(forced?.text, shownChars, JSON.stringify(text));
      for (let i = 0; i < shownChars.length; i++) assert.equal((forced?.originalIndex(i) ?? 0) - 1, view ? view.originalIndex(i) : i, `${JSON.stringify(text)} at ${i}`);
    }
  });

  for (const [name, shape] of Object.entries(shapes)) {
    it(`${name}: found with escapes between any two of its characters, masked whole with the escapes inside`, () => {
      const { text, secret } = shape;
      const start = text.indexOf(secret);
      for (const [escName, esc] of Object.entries(ESCAPES)) {
        // Every position within the secret, and at its ends; a few well-spread positions for every escape kind.
        const positions = escName === 'grep match colour' || escName === 'several' ? Array.from({ length: secret.length + 1 }, (_, i) => i) : [0, 1, 2, 3, 4, 5, Math.floor(secret.length / 2), secret.length - 1, secret.length];
        for (const k of positions) {
          const coloured = `x: ${text.slice(0, start + k)}${esc}${text.slice(start + k)} y\n`;
          const out = r.redactText(coloured);
          assert.ok(out.includes(marker(shape.kind)), `${escName} at ${k}: ${JSON.stringify(out)}`);
          assertHidden(shown(out), secret, `${escName} at ${k}, as shown`);
          assertHidden(out, secret, `${escName} at ${k}, as written`);
          assert.ok(shown(out).startsWith('x: '), 'what precedes the secret is kept');
          assert.ok(out.endsWith(' y\n'), 'what follows it is kept');
        }
      }
      // Escapes at every position at once, and the way grep prints a match of the prefix.
      const every = `${text.slice(0, start)}${[...secret].join('\x1b[1m')}\x1b[0m`;
      assertHidden(shown(r.redactText(every)), secret, 'an escape between every two characters');
      const grepped = `config.env:3:${text.slice(0, start)}\x1b[01;31m\x1b[K${secret.slice(0, 4)}\x1b[m\x1b[K${secret.slice(4)}\n`;
      assert.equal(shown(r.redactText(grepped)), `config.env:3:${text.slice(0, start)}${marker(shape.kind)}\n`);
    });
  }

  it('escapes around a secret stay; only the secret and what is inside it is replaced', () => {
    const gh = fakeSecrets()['github-token'] as string;
    assert.equal(r.redactText(`\x1b[32m${gh}\x1b[0m ok`), `\x1b[32m${marker('github-token')}\x1b[0m ok`);
    assert.equal(r.redactText(`\x1b[32m${gh.slice(0, 10)}\x1b[1m${gh.slice(10)}\x1b[0m ok`), `\x1b[32m${marker('github-token')}\x1b[0m ok`);
  });

  it('a secret in a hyperlink target (not shown, but written) is masked too', () => {
    const gh = fakeSecrets()['github-token'] as string;
    const out = r.redactText(`\x1b]8;;https://example.test/?t=${gh}\x1b\\open\x1b]8;;\x1b\\\n`);
    assertHidden(out, gh, 'hyperlink target');
    assert.ok(shown(out).includes('open'));
  });

  it('a secret next to UTF-8 characters (bytes 0x80-0x9f that are no C1 controls) is found, and the characters kept', () => {
    const gh = fakeSecrets()['github-token'] as string;
    const text = latin1(`“${gh}” → ✔ ─\n`);
    assert.equal(r.redactText(text), latin1(`“${marker('github-token')}” → ✔ ─\n`));
    assert.equal(r.redactText(latin1(`“\x1b[1m${gh}\x1b[0m”`)), latin1(`“\x1b[1m${marker('github-token')}\x1b[0m”`));
  });

  it('ordinary coloured output is left alone: ls --color, git diff --color, git log SHAs, UUIDs, base64, a grep of a non-secret', () => {
    const texts = [
      '\x1b[0m\x1b[01;34msrc\x1b[0m  \x1b[01;32mbuild.sh\x1b[0m  \x1b[01;36mlink\x1b[0m  README.md\n',
      '\x1b[1mdiff --git a/x.ts b/x.ts\x1b[m\n\x1b[1mindex 3b18e51..a94a8fe 100644\x1b[m\n\x1b[36m@@ -1,2 +1,2 @@\x1b[m\n\x1b[31m-const sk = 1;\x1b[m\n\x1b[32m+const sk = 2;\x1b[m\n',
      '\x1b[33mcommit 9fceb02d0ae598e95dc970b74767f19372d61af8\x1b[m\x1b[33m (\x1b[m\x1b[1;36mHEAD -> \x1b[m\x1b[1;32mmain\x1b[m\x1b[33m)\x1b[m\n',
      '\x1b[2m550e8400-e29b-41d4-a716-446655440000\x1b[0m \x1b[1m6ba7b810-9dad-11d1-80b4-00c04fd430c8\x1b[0m\n',
      `\x1b[36mdata:\x1b[0m ${'QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw'.repeat(8)}\n`,
      'src/a.ts:\x1b[01;31m\x1b[Ksk-\x1b[m\x1b[Kbutton: a class name\n',
      '\x1b[01;31m\x1b[Kghp_\x1b[m\x1b[K is the prefix of a GitHub token\n',
      '\x1b]8;;file:///home/u/project/README.md\x1b\\README.md\x1b]8;;\x1b\\\n',
    ];
    for (const t of texts) assert.equal(r.redactText(t), t, JSON.stringify(t));
  });

  it('PGP private key blocks, plain and coloured, terminated or not', () => {
    const pgp = fakePgpPrivateKey();
    const line = pgp.split('\n')[3] as string;
    for (const text of [`before\n${pgp}\nafter`, `before\n\x1b[1m${pgp.replace('BEGIN PGP', 'BEGIN \x1b[31mPGP')}\x1b[0m\nafter`, `before\n${pgp.slice(0, 300)}`]) {
      const out = r.redactText(text);
      assert.ok(out.includes(marker('private-key')), JSON.stringify(out));
      assert.ok(!shown(out).includes(line.slice(0, 20)) && !shown(out).includes(pgp.split('\n')[2]?.slice(0, 20) as string));
      assert.ok(out.startsWith('before\n'));
    }
    assert.ok(r.redactText(`${pgp}\nafter`).endsWith('\nafter'), 'a terminated block ends at its END line');
    // A public key block is no secret.
    const pub = pgp.replaceAll('PRIVATE KEY', 'PUBLIC KEY');
    assert.equal(r.redactText(pub), pub);
  });

  it('AWS secret keys and session tokens in the JSON of aws sts / aws iam, and in credentials files', () => {
    const sts = fakeAwsStsJson();
    const out = r.redactText(sts.json);
    assert.ok(!out.includes(sts.secret) && !out.includes(sts.session.slice(20, 60)), out);
    assert.match(out, /"SecretAccessKey": "\[REDACTED:aws-secret-access-key\]"/);
    assert.match(out, /"SessionToken": "\[REDACTED:aws-session-token\]"/);
    for (const line of [`aws_session_token = ${sts.session}`, `AWS_SESSION_TOKEN=${sts.session}`, `export aws_session_token="${sts.session}"`, `SessionToken: ${sts.session}`]) {
      assert.equal(r.redactText(line).includes(sts.session.slice(30, 60)), false, line);
    }
    for (const line of [`secret_access_key = ${sts.secret}`, `SecretAccessKey: ${sts.secret}`, `"secretAccessKey":"${sts.secret}"`]) {
      assert.equal(r.redactText(line).includes(sts.secret), false, line);
    }
    // The same, coloured as `jq -C` prints it.
    const coloured = sts.json.replace(/("[A-Za-z]+"): (".*?")/g, '\x1b[34;1m$1\x1b[0m\x1b[1;39m: \x1b[0;32m$2\x1b[0m');
    const cOut = r.redactText(coloured);
    assert.ok(!shown(cOut).includes(sts.secret) && !shown(cOut).includes(sts.session.slice(20, 60)), cOut);
    // Short or ordinary values after such names are left alone.
    for (const line of ['session_token = null', '"SessionToken": ""', 'sessionToken: abc', 'secret_access_key = <your key here>']) assert.equal(r.redactText(line), line);
  });

  describe('streamed: a coloured secret split anywhere across writes is never shown in part', () => {
    const gh = fakeSecrets()['github-token'] as string;
    const openai = fakeSecrets()['openai-key'] as string;
    const jwt = fakeSecrets().jwt as string;
    const shapesToStream: Record<string, [string, string]> = {
      'grep match of the prefix': [`hit: \x1b[01;31m\x1b[K${gh.slice(0, 4)}\x1b[m\x1b[K${gh.slice(4)} end\n`, gh],
      'a hyperlink around a key, an escape inside': [`\x1b]8;;https://x.test\x1b\\${openai.slice(0, 20)}\x1b[1C${openai.slice(20)}\x1b]8;;\x1b\\ end\n`, openai],
      'a reset right after the prefix of a JWT': [`t=\x1b[33meyJ\x1b[0m${jwt.slice(3)} end\n`, jwt],
    };
    for (const [name, [text, secret]] of Object.entries(shapesToStream)) {
      it(`${name}: split at every byte, read in chunks of 1, 7 and 4096 bytes`, () => {
        const bytes = enc.encode(text);
        for (let cut = 0; cut <= bytes.length; cut++) {
          for (const max of cut % 5 === 0 ? [1, 7, 4096] : [4096]) {
            const seen = agentReads(redactor(), [bytes.subarray(0, cut), bytes.subarray(cut)], max);
            assertHidden(shown(seen), secret, `cut ${cut}, chunks of ${max}`);
            assert.ok(shown(seen).endsWith(' end\n'), `cut ${cut}: ${JSON.stringify(seen)}`);
          }
        }
      });
    }

    it('a coloured token dribbled one byte per write never shows a piece', () => {
      const text = `x \x1b[1;31m${gh.slice(0, 4)}\x1b[0m${gh.slice(4, 20)}\x1b]8;;\x07${gh.slice(20)}\x1b[K y\n`;
      const bytes = enc.encode(text);
      const seen = agentReads(redactor(), Array.from(bytes, (b) => new Uint8Array([b])), 64);
      assertHidden(shown(seen), gh, 'dribbled');
      assert.equal(shown(seen), `x ${marker('github-token')} y\n`);
    });
  });
});
