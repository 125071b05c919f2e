import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';

// The bundle replaces mime-db with src/base/node/mimeDbSubset.json (esbuild alias). express consults it through
// mime-types: res.json → contentType('application/json') (charset), res.send(string) → 'html', sendStatus → 'txt',
// a Buffer → 'bin', and body parsers through type-is. These checks keep the subset true to mime-db and complete
// for those lookups.
const subset = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', '..', 'src', 'base', 'node', 'mimeDbSubset.json'), 'utf8')) as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const mimeDb = require('mime-db') as Record<string, unknown>;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const mimeTypes = require('mime-types') as { lookup(ext: string): string | false; contentType(type: string): string | false };

describe('the bundled mime-db subset', () => {
  it('holds each entry exactly as mime-db has it', () => {
    for (const [type, entry] of Object.entries(subset)) assert.deepEqual(entry, mimeDb[type], type);
  });

  it('answers every lookup express makes for this server as the full database does', () => {
    for (const ext of ['json', 'html', 'txt', 'bin']) {
      const type = mimeTypes.lookup(ext);
      assert.ok(type && type in subset, `${ext} → ${String(type)} is in the subset`);
    }
    for (const type of ['application/json', 'text/html', 'text/plain', 'application/octet-stream', 'application/x-www-form-urlencoded']) {
      assert.ok(type in subset, type);
    }
    assert.equal(mimeTypes.contentType('application/json'), 'application/json; charset=utf-8');
  });
});
