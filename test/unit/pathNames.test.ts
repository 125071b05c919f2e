/**
 * The names policy, through the path an agent uses (a real MCP client, the real services, a real temp folder, the
 * system ripgrep): every name the file system allows is shown by `find` and `search` exactly as it is on disk, and
 * `read` and `apply_patch` take it exactly (a patch header writes an awkward name as a JSON string, see headerPath).
 * The one exception is a name that is not valid UTF-8: no JSON text carries it, so every listing leaves it out and
 * says why, in the same words. Each kind of name gets the same answer from every tool.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { headerPath } from '../../src/features/patches/common/parser';
import { isCanonicalPath, isNameable } from '../../src/base/paths';
import type { ReviewComment } from '../../src/kernel/approvals/reviewComments';
import { checkReviewComments } from '../../src/kernel/approvals/reviewComments';
import { DEFAULT_SEARCH_SETTINGS } from '../../src/features/files/common/contentSearch';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import { RipgrepSearch } from '../../src/features/files/node/ripgrepSearch';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld, sha256 } from './helpers/patchWorld';
import { ok, toolError } from './helpers/workspaceFixture';

/** The Debian ripgrep (plain-Node hosts pass one explicitly). */
const SYSTEM_RG = '/usr/bin/rg';

/** One name of each kind, in the folder names/ (a backslash one also as a folder). */
const KINDS: Record<string, string> = {
  backslash: 'a\\b.txt',
  'backslash folder': 'back\\slash/in.txt',
  'dot-dot with backslashes': '..\\up.txt',
  newline: 'new\nline.txt',
  'carriage return': 'carriage\r.txt',
  'other control characters': 'bell\u0007tab\tesc\u001b.txt',
  'leading spaces': '  lead.txt',
  'trailing spaces': 'trail.txt  ',
  'glob metacharacters': '[a]*?{b,c}.txt',
  'leading dash': '-rf.txt',
  'leading hash': '#x.txt',
  'percent-encoded dots': '%2e%2e.txt',
  'leading quote': '"q".txt',
  'leading tilde': '~$lock.txt',
  'drive-like colon': 'c:d.txt',
  'very long (255 bytes)': `${'l'.repeat(251)}.txt`,
  'non-BMP characters': '\u{1F600}\u{10348}.txt',
  'NFC form': 'caf\u00e9.txt',
  'NFD form': 'cafe\u0301.txt',
};

const rel = (name: string): string => `names/${name}`;
const content = (kind: string): string => `needle ${kind}\n`;

describe('every legal name gets the same answer from every tool', function () {
  this.timeout(120_000);
  let world: PatchWorld;
  /** A name that is not valid UTF-8, as bytes, and the lossy string a listing would have shown. */
  const BAD = Buffer.concat([Buffer.from('names/bad'), Buffer.from([0xff, 0xfe]), Buffer.from('.txt')]);

  before(async () => {
    world = await openPatchWorld({}, { contentSearch: new RipgrepContentSearch({ rgPath: SYSTEM_RG, source: 'explicit' }) });
    for (const [kind, name] of Object.entries(KINDS)) {
      await fsp.mkdir(path.dirname(world.abs(rel(name))), { recursive: true });
      await fsp.writeFile(world.abs(rel(name)), content(kind));
    }
    await fsp.writeFile(Buffer.concat([Buffer.from(`${world.root}/`), BAD]), 'needle bad\n');
    // Also a folder whose name is not UTF-8, with a file below it.
    const badDir = Buffer.concat([Buffer.from(`${world.root}/names/dir`), Buffer.from([0xc3, 0x28])]);
    await fsp.mkdir(badDir);
    await fsp.writeFile(Buffer.concat([badDir, Buffer.from('/inner.txt')]), 'needle inner\n');
  });
  after(async () => {
    await world.dispose();
  });

  it('the names are on disk as written (NFC and NFD are two files)', async () => {
    const top = await fsp.readdir(world.abs('names'));
    for (const name of Object.values(KINDS)) assert.ok(top.includes(name.split('/')[0] as string), JSON.stringify(name));
    assert.ok(top.includes('caf\u00e9.txt') && top.includes('cafe\u0301.txt'));
  });

  const expected = Object.values(KINDS).map(rel).sort();

  it('find lists every name exactly, for a folder glob and for **, and names the ones it leaves out', async () => {
    for (const pattern of ['names/**', '**', '**/*']) {
      const r = ok<{ paths: string[]; notes?: string[] }>(await world.call('find', { workspace_id: WS_ID, pattern }));
      assert.deepEqual(r.paths.filter((p) => p.startsWith('names/')), expected, pattern);
      assert.ok(!r.paths.some((p) => p.includes('\uFFFD')), 'no lossy name is listed');
      assert.match((r.notes ?? []).join(' '), /2 file\(s\) were left out because their names cannot be passed as paths: its name is not valid UTF-8/, pattern);
    }
  });

  it('find matches such names with ordinary globs: names/* and **/*.txt', async () => {
    const star = ok<{ paths: string[] }>(await world.call('find', { workspace_id: WS_ID, pattern: 'names/*' })).paths;
    assert.deepEqual(star, expected.filter((p) => !p.slice('names/'.length).includes('/')));
    const txt = ok<{ paths: string[] }>(await world.call('find', { workspace_id: WS_ID, pattern: '**/*.txt' })).paths;
    assert.deepEqual(txt, expected.filter((p) => p.endsWith('.txt')));
    assert.ok(txt.includes('names/a\\b.txt') && txt.includes('names/back\\slash/in.txt'));
  });

  it('search finds the text in every name, shows the names exactly, and leaves the non-UTF-8 one out with the same note', async () => {
    for (const include of [undefined, ['names/**'], ['**/*.txt']]) {
      const r = ok<{ matches: { path: string; text: string }[]; notes?: string[]; files_with_matches: number }>(
        await world.call('search', { workspace_id: WS_ID, query: 'needle', max_results: 1000, ...(include ? { include } : {}) }),
      );
      const want = include?.[0] === '**/*.txt' ? expected.filter((p) => p.endsWith('.txt')) : expected;
      assert.deepEqual(r.matches.map((m) => m.path).sort(), want, JSON.stringify(include));
      for (const m of r.matches) {
        const kind = Object.keys(KINDS).find((k) => rel(KINDS[k] as string) === m.path) as string;
        assert.equal(m.text, `needle ${kind}`, m.path);
      }
      assert.equal(r.files_with_matches, want.length);
      assert.match((r.notes ?? []).join(' '), /left out because (the name|their names) cannot be passed as paths: its name is not valid UTF-8/);
    }
  });

  for (const [kind, name] of Object.entries(KINDS)) {
    it(`${kind}: read takes the listed name, and apply_patch updates, moves and deletes it under that name`, async () => {
      const p = rel(name);
      const r = ok<{ content: string; version: string }>(await world.call('read', { workspace_id: WS_ID, path: p }));
      assert.equal(r.content, content(kind));
      const moved = `moved/${name}`;
      const patch = `*** Begin Patch\n*** Update File: ${headerPath(p)}\n*** Move to: ${headerPath(moved)}\n@@\n-needle ${kind}\n+patched ${kind}\n*** End Patch\n`;
      const applied = ok<{ status: string; files: { path: string; move_to?: string }[] }>(
        await world.call('apply_patch', { workspace_id: WS_ID, patch, expected_versions: { [p]: r.version }, operation_key: `names-${sha256(kind).slice(7, 23)}` }),
      );
      assert.equal(applied.status, 'applied');
      assert.deepEqual(applied.files.map((f) => [f.path, f.move_to]), [[p, moved]]);
      assert.equal(await fsp.readFile(world.abs(moved), 'utf8'), `patched ${kind}\n`);
      await assert.rejects(fsp.access(world.abs(p)));
      // And back, so the listings above keep seeing it; then add and delete a sibling under the same kind of name.
      const back = ok<{ content: string; version: string }>(await world.call('read', { workspace_id: WS_ID, path: moved }));
      const restore = `*** Begin Patch\n*** Update File: ${headerPath(moved)}\n*** Move to: ${headerPath(p)}\n@@\n-patched ${kind}\n+needle ${kind}\n*** End Patch\n`;
      ok(await world.call('apply_patch', { workspace_id: WS_ID, patch: restore, expected_versions: { [moved]: back.version }, operation_key: `names-back-${sha256(kind).slice(7, 23)}` }));
      const added = `added/${name}`;
      ok(await world.call('apply_patch', { workspace_id: WS_ID, patch: `*** Begin Patch\n*** Add File: ${headerPath(added)}\n+new ${kind}\n*** End Patch\n`, expected_versions: {}, operation_key: `names-add-${sha256(kind).slice(7, 23)}` }));
      assert.equal(await fsp.readFile(world.abs(added), 'utf8'), `new ${kind}\n`);
      const addedVersion = ok<{ version: string }>(await world.call('read', { workspace_id: WS_ID, path: added })).version;
      ok(await world.call('apply_patch', { workspace_id: WS_ID, patch: `*** Begin Patch\n*** Delete File: ${headerPath(added)}\n*** End Patch\n`, expected_versions: { [added]: addedVersion }, operation_key: `names-del-${sha256(kind).slice(7, 23)}` }));
      await assert.rejects(fsp.access(world.abs(added)));
    });
  }

  it('a name a header cannot hold as plain text is refused unquoted with a parse error that says what it found', async () => {
    const e = toolError(await world.call('apply_patch', { workspace_id: WS_ID, patch: '*** Begin Patch\n*** Add File: "unclosed.txt\n+x\n*** End Patch\n', expected_versions: {}, operation_key: 'names-unclosed' }));
    assert.equal(e.code, 'PATCH_INVALID');
    assert.equal(e.details?.line, 2);
    assert.match(e.message, /expected a path, or a path written as one JSON string, but found "\\"unclosed\.txt"/);
  });

  it('the lossy form of the non-UTF-8 name names no file: read says NOT_FOUND, nothing is created', async () => {
    const lossy = BAD.toString('utf8');
    assert.ok(lossy.includes('\uFFFD'));
    assert.equal(toolError(await world.call('read', { workspace_id: WS_ID, path: lossy })).code, 'NOT_FOUND');
  });

  it('text no name can hold (a lone surrogate) is INVALID_ARGUMENTS for read and apply_patch alike', async () => {
    assert.equal(toolError(await world.call('read', { workspace_id: WS_ID, path: 'names/\ud800.txt' })).code, 'INVALID_ARGUMENTS');
    const e = toolError(await world.call('apply_patch', { workspace_id: WS_ID, patch: '*** Begin Patch\n*** Add File: names/\ud800.txt\n+x\n*** End Patch\n', expected_versions: {}, operation_key: 'names-surrogate' }));
    assert.equal(e.code, 'INVALID_ARGUMENTS');
  });

  it('the ripgrep adapter reports a backslash name as it is, not as a folder, and a non-UTF-8 one apart', async () => {
    const rg = new RipgrepSearch(SYSTEM_RG);
    const r = await rg.run({
      root: world.root,
      query: 'needle',
      regex: false,
      caseSensitive: false,
      include: [],
      exclude: [],
      settings: DEFAULT_SEARCH_SETTINGS,
      maxResults: 1000,
      contextLines: 0,
      maxLineChars: 500,
      maxTotalBytes: 1 << 20,
      timeoutMs: 60_000,
      signal: new AbortController().signal,
    });
    const paths = [...new Set(r.matches.map((m) => m.path))].sort();
    assert.ok(paths.includes('names/a\\b.txt'), JSON.stringify(paths));
    assert.ok(!paths.includes('names/a/b.txt'), JSON.stringify(paths));
    assert.equal(r.unrepresentable?.length, 2, JSON.stringify(r.unrepresentable));
  });
});

describe('the review takes the same names: its URIs and its comments use the one path check', () => {
  const comment = (p: string): ReviewComment => ({ path: p, range: { start_line: 1, end_line: 1 }, quoted: '', body: 'why?' });

  for (const [kind, name] of Object.entries(KINDS)) {
    it(`${kind}: a path with it is canonical and a comment on it is kept exactly`, () => {
      for (const p of [name, rel(name)]) {
        assert.equal(isCanonicalPath(p), isNameable(p), 'the review takes what the tools take');
        assert.ok(isCanonicalPath(p), JSON.stringify(p));
        assert.equal(checkReviewComments([comment(p)], [p])[0]?.path, p);
      }
    });
  }

  it('a path a tool refuses, or a second spelling of one it takes, is refused by the review too', () => {
    for (const p of ['', '/abs.txt', '../up.txt', 'a/../b.txt', '~/x.txt', 'nul\0.txt', 'a//b.txt', './a.txt', 'a/./b.txt', 'dir/', '\ud800.txt']) {
      assert.equal(isCanonicalPath(p), false, JSON.stringify(p));
      assert.throws(() => checkReviewComments([comment(p)]), (e: unknown) => ToolError.is(e, 'INVALID_ARGUMENTS') && e.details?.field === 'comments[0].path', JSON.stringify(p));
    }
  });
});
