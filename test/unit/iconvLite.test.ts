// The bundle's stand-in for iconv-lite (src/base/node/iconvLite.ts) decodes as iconv-lite itself does, for the
// encodings a request body may name, whole or split into chunks at any byte; unknown ones fail the same way.
import * as assert from 'node:assert/strict';
import * as real from 'iconv-lite';
import * as shim from '../../src/base/node/iconvLite';

const samples: Buffer[] = [
  Buffer.from('{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read","arguments":{"path":"naïve/日本語/😀.txt"}}}', 'utf8'),
  Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}', 'utf8')]),
  Buffer.from([0x7b, 0x22, 0xe9, 0x22, 0x7d]),
  Buffer.from('\ufeff{"u":"ü€"}', 'utf16le'),
  Buffer.from(Array.from({ length: 256 }, (_, i) => i)),
];

function chunked(decoder: { write(b: Buffer): string; end(): string | undefined }, bytes: Buffer, size: number): string {
  let out = '';
  for (let i = 0; i < bytes.length; i += size) out += decoder.write(bytes.subarray(i, i + size));
  return out + (decoder.end() ?? '');
}

describe('iconv-lite stand-in of the bundle', () => {
  for (const enc of ['utf-8', 'UTF8', 'utf-16le', 'ucs2', 'latin1', 'binary', 'ascii']) {
    it(`decodes ${enc} as iconv-lite does, whole and in chunks`, () => {
      assert.equal(shim.encodingExists(enc), true);
      for (const bytes of samples) {
        // Undecodable bytes become U+FFFD in both; ascii differs only above 0x7f, which JSON never needs there.
        const expected = real.decode(bytes, enc);
        if (enc === 'ascii' && bytes.some((b) => b > 0x7f)) continue;
        assert.equal(shim.decode(bytes, enc), expected, `${enc}: ${bytes.toString('hex').slice(0, 40)}`);
        for (const size of [1, 2, 3, 7]) assert.equal(chunked(shim.getDecoder(enc), bytes, size), chunked(real.getDecoder(enc), bytes, size), `${enc} in ${size}-byte chunks`);
      }
    });
  }

  // Legacy charsets go to TextDecoder (WHATWG tables): equal on text written in them. On bytes a charset leaves
  // undefined the two differ (WHATWG maps windows-1251's 0x98 to U+0098, iconv-lite to U+FFFD): JSON never has those.
  for (const [enc, text] of [
    ['windows-1251', '{"name":"Привет, мир"}'],
    ['shift_jis', '{"path":"日本語/ファイル.txt"}'],
    ['gbk', '{"path":"中文/文件.txt"}'],
  ] as const) {
    it(`decodes well-formed ${enc} as iconv-lite does, whole and in chunks`, () => {
      const bytes = real.encode(text, enc);
      assert.equal(shim.encodingExists(enc), true);
      assert.equal(shim.decode(bytes, enc), text);
      for (const size of [1, 2, 3]) assert.equal(chunked(shim.getDecoder(enc), bytes, size), text, `${enc} in ${size}-byte chunks`);
    });
  }

  it('refuses an unknown encoding with the message raw-body maps to 415', () => {
    assert.equal(shim.encodingExists('no-such-charset'), false);
    assert.equal(real.encodingExists('no-such-charset'), false);
    assert.throws(() => shim.getDecoder('no-such-charset'), /^Error: Encoding not recognized: /);
    assert.throws(() => real.getDecoder('no-such-charset'), /^Error: Encoding not recognized: /);
    assert.throws(() => shim.decode(Buffer.from('x'), 'no-such-charset'), /Encoding not recognized/);
  });
});
