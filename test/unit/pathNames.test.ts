/**
 * Names are part of the path check: find and search list only paths the other tools accept, whatever the glob. A
 * file whose name holds a backslash (or a percent-encoded dot) is listed by no glob and named by no tool, so
 * `dir/*` and `**\/*b.txt` agree; the ripgrep adapter keeps such a name as it is on disk instead of turning the
 * backslash into a folder separator.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_SEARCH_SETTINGS } from '../../src/core/ports/contentSearch';
import { RipgrepContentSearch } from '../../src/node/ripgrepContentSearch';
import { RipgrepSearch } from '../../src/node/ripgrepSearch';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

/** The Debian ripgrep (plain-Node hosts pass one explicitly). */
const SYSTEM_RG = '/usr/bin/rg';

describe('names no tool can take are listed nowhere', () => {
  let base: string;
  let root: string;
  let h: Harness;

  before(async () => {
    base = await makeTree({ 'proj/dir/plain-b.txt': 'needle\n', 'proj/dir/a\\b.txt': 'needle\n', 'proj/dir/%2e%2e.txt': 'needle\n', 'proj/back\\slash/in.txt': 'needle\n' }, 'codespace-names-');
    root = path.join(base, 'proj');
    const search = new RipgrepContentSearch({ rgPath: SYSTEM_RG, source: 'explicit', settings: () => DEFAULT_SEARCH_SETTINGS });
    h = await connectHarness([{ root, name: 'proj', profile: 'read-only' }], { contentSearch: search });
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  it('the files are there on disk', async () => {
    assert.deepEqual((await fsp.readdir(path.join(root, 'dir'))).sort(), ['%2e%2e.txt', 'a\\b.txt', 'plain-b.txt']);
  });

  for (const pattern of ['dir/*', '**/*b.txt', '**/*', '**', 'dir/?\\b.txt', '**/*.txt', 'back*/*']) {
    it(`find ${JSON.stringify(pattern)} lists only nameable paths`, async () => {
      const r = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern }));
      assert.ok(r.paths.every((p) => !p.includes('\\') && !p.includes('%2e')), JSON.stringify(r.paths));
    });
  }

  it('find "dir/*" and "**/*b.txt" agree on dir/', async () => {
    const a = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: 'dir/*' })).paths;
    const b = ok<{ paths: string[] }>(await h.call('find', { workspace_id: 'proj', pattern: '**/*b.txt' })).paths;
    assert.deepEqual(a, ['dir/plain-b.txt']);
    assert.deepEqual(b, ['dir/plain-b.txt']);
  });

  it('search leaves them out with a note, with and without an include glob', async () => {
    for (const include of [undefined, ['dir/*'], ['**/*b.txt']]) {
      const r = ok<{ matches: { path: string }[]; notes?: string[]; files_with_matches: number }>(
        await h.call('search', { workspace_id: 'proj', query: 'needle', ...(include ? { include } : {}) }),
      );
      assert.deepEqual(r.matches.map((m) => m.path), ['dir/plain-b.txt'], JSON.stringify(include));
      assert.equal(r.files_with_matches, 1);
      assert.match((r.notes ?? []).join(' '), /left out because their names cannot be passed as paths/);
    }
  });

  it('read refuses such a name with the path error every tool gives', async () => {
    const e = toolError(await h.call('read', { workspace_id: 'proj', path: 'dir/a\\b.txt' }));
    assert.equal(e.code, 'PATH_OUTSIDE_WORKSPACE');
    assert.match(e.message, /backslash/);
  });

  it('the ripgrep adapter reports a backslash name as it is, not as a folder', async () => {
    const rg = new RipgrepSearch(SYSTEM_RG);
    const r = await rg.run({
      root,
      query: 'needle',
      regex: false,
      caseSensitive: false,
      include: [],
      exclude: [],
      settings: DEFAULT_SEARCH_SETTINGS,
      maxResults: 100,
      contextLines: 0,
      maxLineChars: 500,
      maxTotalBytes: 1 << 20,
      timeoutMs: 30_000,
      signal: new AbortController().signal,
    });
    const paths = [...new Set(r.matches.map((m) => m.path))].sort();
    assert.ok(paths.includes('dir/a\\b.txt'), JSON.stringify(paths));
    assert.ok(!paths.includes('dir/a/b.txt'), JSON.stringify(paths));
  });
});
