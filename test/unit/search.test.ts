import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ContentSearch, ContentSearchRequest, ContentSearchResult } from '../../src/features/files/common/contentSearch';
import { DEFAULT_SEARCH_SETTINGS } from '../../src/features/files/common/contentSearch';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import { RipgrepSearch, anchorGlob, ripgrepArgs } from '../../src/features/files/node/ripgrepSearch';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree, toolError } from './helpers/workspaceFixture';

/** The Debian ripgrep: plain-Node hosts pass one explicitly (the extension uses VS Code's own). */
export const SYSTEM_RG = '/usr/bin/rg';

interface Match {
  path: string;
  line: number;
  column: number;
  end_column: number;
  text: string;
  text_truncated?: boolean;
  before?: { line: number; text: string }[];
  after?: { line: number; text: string }[];
}
interface SearchResult {
  matches: Match[];
  truncated: boolean;
  timed_out?: boolean;
  files_with_matches: number;
  engine: { kind: string; source: string; path?: string };
  notes?: string[];
}

/** A ContentSearch that records what the tool asked and how each search ended. */
class RecordingSearch implements ContentSearch {
  readonly requests: ContentSearchRequest[] = [];
  readonly outcomes: string[] = [];
  constructor(private readonly inner: ContentSearch) {}
  engine() {
    return this.inner.engine();
  }
  settings(root: string) {
    return this.inner.settings(root);
  }
  async search(r: ContentSearchRequest): Promise<ContentSearchResult> {
    this.requests.push(r);
    try {
      const out = await this.inner.search(r);
      this.outcomes.push('resolved');
      return out;
    } catch (err) {
      this.outcomes.push(`rejected ${(err as { code?: string }).code ?? String(err)}`);
      throw err;
    }
  }
}

describe('search: content search with ripgrep', () => {
  let base: string;
  let root: string;
  let h: Harness;
  let recording: RecordingSearch;
  let engine: RipgrepContentSearch;
  let settings = { ...DEFAULT_SEARCH_SETTINGS };
  const search = async (args: Record<string, unknown>) => ok<SearchResult>(await h.call('search', { workspace_id: 'proj', ...args }));

  before(async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 40; i++) many[`proj/many/f${String(i).padStart(2, '0')}.txt`] = 'needle here\n'.repeat(5);
    base = await makeTree({
      'proj/src/a.ts': 'export const alpha = 1;\nconst beta = alpha + 1;\n// ALPHA in caps\n',
      'proj/src/b.ts': 'line one\nline two\nthe target line\nline four\nline five\n',
      'proj/src/unicode.ts': 'const é = "x"; const target = 1;\n',
      'proj/src/crlf.ts': 'first\r\nsecond target\r\n',
      'proj/docs/readme.md': 'target in docs\n',
      'proj/flags.txt': 'contains -e and --pre=./pre.sh and --files and -uuu literally\n',
      'proj/pre.sh': '#!/bin/sh\ntouch "$(dirname "$0")/PRE_RAN"\ncat "$1"\n',
      'proj/ignored/by-git.txt': 'gitignored target\n',
      'proj/.gitignore': 'ignored/\n',
      'proj/.git/HEAD': 'target in .git\n',
      'proj/node_modules/pkg/index.js': 'target in node_modules\n',
      'proj/build/out.js': 'target in build\n',
      'proj/long.txt': 'x'.repeat(5000) + ' target ' + 'y'.repeat(5000) + '\n',
      ...many,
      'outside/secret.txt': 'target secret outside\n',
    }, 'codespace-search-');
    root = path.join(base, 'proj');
    await fsp.chmod(path.join(root, 'pre.sh'), 0o755);
    await fsp.symlink(path.join(base, 'outside'), path.join(root, 'linked-dir'));
    await fsp.symlink(path.join(base, 'outside', 'secret.txt'), path.join(root, 'linked-file.txt'));
    engine = new RipgrepContentSearch({ rgPath: SYSTEM_RG, source: 'explicit', settings: () => settings });
    recording = new RecordingSearch(engine);
    h = await connectHarness([{ root, name: 'proj', profile: 'read-only' }], { contentSearch: recording });
  });
  beforeEach(() => {
    settings = { ...DEFAULT_SEARCH_SETTINGS };
  });
  after(async () => {
    await h.close();
    await removeTree(base);
  });

  it('finds a literal: path, 1-based line and column, the line, the engine', async () => {
    const r = await search({ query: 'target line' });
    assert.equal(r.truncated, false);
    assert.deepEqual(r.matches, [{ path: 'src/b.ts', line: 3, column: 5, end_column: 16, text: 'the target line' }]);
    assert.equal(r.files_with_matches, 1);
    assert.deepEqual(r.engine, { kind: 'ripgrep', source: 'explicit', path: SYSTEM_RG });
  });

  it('columns count UTF-16 code units after non-ASCII text; CRLF lines come without their terminator', async () => {
    const r = await search({ query: 'target', include: ['src/unicode.ts', 'src/crlf.ts'] });
    const byPath = new Map(r.matches.map((m) => [m.path, m]));
    assert.equal(byPath.get('src/unicode.ts')?.column, 22);
    assert.equal(byPath.get('src/unicode.ts')?.end_column, 28);
    assert.equal(byPath.get('src/crlf.ts')?.text, 'second target');
  });

  it('is case-insensitive by default, exact with case_sensitive; regex only when asked', async () => {
    const any = await search({ query: 'alpha', include: ['src/a.ts'] });
    assert.deepEqual(any.matches.map((m) => m.line), [1, 2, 3]);
    const exact = await search({ query: 'alpha', include: ['src/a.ts'], case_sensitive: true });
    assert.deepEqual(exact.matches.map((m) => m.line), [1, 2]);
    const literal = await search({ query: 'al.ha', include: ['src/a.ts'] });
    assert.equal(literal.matches.length, 0);
    const regex = await search({ query: '^const \\w+ =', regex: true, include: ['src/a.ts'] });
    assert.deepEqual(regex.matches.map((m) => [m.line, m.column, m.end_column]), [[2, 1, 13]]);
  });

  it('context_lines gives the lines before and after each match', async () => {
    const r = await search({ query: 'target line', context_lines: 2 });
    const m = r.matches[0] as Match;
    assert.deepEqual(m.before, [{ line: 1, text: 'line one' }, { line: 2, text: 'line two' }]);
    assert.deepEqual(m.after, [{ line: 4, text: 'line four' }, { line: 5, text: 'line five' }]);
    const none = await search({ query: 'target line' });
    assert.equal((none.matches[0] as Match).before, undefined);
  });

  it('max_results bounds the matches exactly and says truncated; rg is stopped rather than left to finish', async () => {
    const r = await search({ query: 'needle', include: ['many/**'], max_results: 7 });
    assert.equal(r.matches.length, 7);
    assert.equal(r.truncated, true);
    // Whether the real rg is still running when the bound is reached depends on the machine's speed, so the stop is
    // shown with an rg that never ends by itself: it prints real rg's answer, then waits. Left to finish, the search
    // would never answer; stopped, it answers with the bound.
    const endless = path.join(base, 'endless-rg');
    await fsp.writeFile(endless, `#!/bin/sh\n${SYSTEM_RG} "$@"\nexec sleep 600\n`, { mode: 0o755 });
    const stopping = new RipgrepContentSearch({ rgPath: endless, source: 'explicit', settings: () => settings });
    const bounded = await stopping.search({
      root: await fsp.realpath(root),
      query: 'needle',
      regex: false,
      caseSensitive: false,
      include: ['many/**'],
      exclude: [],
      settings,
      maxResults: 7,
      contextLines: 0,
      maxLineChars: 500,
      maxTotalBytes: 1 << 20,
      timeoutMs: 60_000,
      signal: new AbortController().signal,
    });
    assert.equal(bounded.matches.length, 7);
    assert.equal(bounded.truncated, true);
    assert.equal(bounded.timed_out, false);
    assert.equal(stopping.lastExit?.signal, 'SIGKILL');
    const all = await search({ query: 'needle', include: ['many/**'], max_results: 200 });
    assert.equal(all.matches.length, 200);
    assert.equal(all.truncated, false);
    assert.deepEqual(engine.lastExit, { code: 0, signal: null });
    const over = toolError(await h.call('search', { workspace_id: 'proj', query: 'x', max_results: 100000 }));
    assert.equal(over.code, 'INVALID_ARGUMENTS');
  });

  it('a very long line is cut to 500 characters and flagged', async () => {
    const r = await search({ query: 'target', include: ['long.txt'] });
    const m = r.matches[0] as Match;
    assert.equal(m.text.length, 500);
    assert.equal(m.text_truncated, true);
    assert.equal(m.column, 5002);
  });

  for (const query of ['-e', '--pre=./pre.sh', '--files', '-', '--', '--pre', '-uuu']) {
    it(`an option-like query ${JSON.stringify(query)} is data, never a flag`, async () => {
      const r = await search({ query });
      assert.ok(r.matches.some((m) => m.path === 'flags.txt'), `found ${JSON.stringify(query)} in flags.txt`);
      assert.ok(r.matches.every((m) => m.text.includes(query)), 'every match contains the query itself');
      await assert.rejects(fsp.access(path.join(root, 'PRE_RAN')), 'the preprocessor never ran');
    });
  }

  it('option-like globs are data too, and RIPGREP_CONFIG_PATH cannot add --pre', async () => {
    const config = path.join(base, 'rgconfig');
    await fsp.writeFile(config, `--pre=${path.join(root, 'pre.sh')}\n--no-ignore\n`);
    const saved = process.env.RIPGREP_CONFIG_PATH;
    process.env.RIPGREP_CONFIG_PATH = config;
    try {
      const r = await search({ query: 'target', include: ['--pre=./pre.sh', '**/*.md'], exclude: ['-e'] });
      assert.deepEqual(r.matches.map((m) => m.path), ['docs/readme.md']);
      await assert.rejects(fsp.access(path.join(root, 'PRE_RAN')), 'the preprocessor never ran');
      const ignored = await search({ query: 'gitignored' });
      assert.equal(ignored.matches.length, 0, 'the config file\'s --no-ignore did not apply either');
    } finally {
      if (saved === undefined) delete process.env.RIPGREP_CONFIG_PATH;
      else process.env.RIPGREP_CONFIG_PATH = saved;
    }
  });

  it('every value travels inside its own option argument, with "." after "--" as the only path', () => {
    const args = ripgrepArgs({ query: '--pre=sh', regex: false, caseSensitive: false, include: ['-x'], exclude: ['--y'], settings: DEFAULT_SEARCH_SETTINGS, contextLines: 0 });
    assert.ok(args.includes('--regexp=--pre=sh'));
    assert.ok(args.includes('--glob=/-x'));
    assert.ok(args.includes('--glob=!/--y'));
    assert.deepEqual(args.slice(-2), ['--', '.']);
    assert.ok(!args.some((a) => a === '--follow' || a === '-L' || a.startsWith('--pre')));
    assert.ok(args.includes('--no-config'));
    assert.equal(anchorGlob('**/x'), '**/x');
    assert.equal(anchorGlob('build'), '/build');
  });

  it('honours the exclude settings, .gitignore and the default excludes (.git, node_modules)', async () => {
    const r = await search({ query: 'target' });
    const paths = r.matches.map((m) => m.path).sort();
    assert.ok(paths.includes('build/out.js'));
    for (const p of ['ignored/by-git.txt', '.git/HEAD', 'node_modules/pkg/index.js']) assert.ok(!paths.includes(p), `${p} is excluded`);
    settings = { ...DEFAULT_SEARCH_SETTINGS, excludes: [...DEFAULT_SEARCH_SETTINGS.excludes, 'build', 'docs/*.md'] };
    const excluded = (await search({ query: 'target' })).matches.map((m) => m.path);
    assert.ok(!excluded.includes('build/out.js'));
    assert.ok(!excluded.includes('docs/readme.md'));
    settings = { ...DEFAULT_SEARCH_SETTINGS, useIgnoreFiles: false };
    const unignored = (await search({ query: 'gitignored' })).matches.map((m) => m.path);
    assert.deepEqual(unignored, ['ignored/by-git.txt']);
  });

  it('include and exclude arguments narrow the search, anchored at the root as VS Code does', async () => {
    const r = await search({ query: 'target', include: ['src/**'], exclude: ['src/crlf.ts'] });
    assert.deepEqual(r.matches.map((m) => m.path).sort(), ['src/b.ts', 'src/unicode.ts']);
    const anchored = await search({ query: 'target', include: ['b.ts'] });
    assert.equal(anchored.matches.length, 0, '"b.ts" names a file at the root, not src/b.ts');
  });

  it('never follows a link out of the workspace (a linked folder or file)', async () => {
    settings = { ...DEFAULT_SEARCH_SETTINGS, followSymlinks: true };
    const r = await search({ query: 'secret' });
    assert.deepEqual(r.matches, []);
  });

  it('refuses bad arguments with INVALID_ARGUMENTS naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ query: 'a\nb' }, 'query'],
      [{ query: 'a\0b' }, 'query'],
      [{ query: 'x', include: ['../outside/**'] }, 'include[0]'],
      [{ query: 'x', include: ['/etc/**'] }, 'include[0]'],
      [{ query: 'x', exclude: ['!src'] }, 'exclude[0]'],
      [{ query: 'x', context_lines: 11 }, 'context_lines'],
    ];
    for (const [args, field] of cases) {
      const e = toolError(await h.call('search', { workspace_id: 'proj', ...args }));
      assert.equal(e.code, 'INVALID_ARGUMENTS', JSON.stringify(args));
      assert.equal(e.details?.field, field, JSON.stringify(args));
    }
    const bad = toolError(await h.call('search', { workspace_id: 'proj', query: '(unclosed', regex: true }));
    assert.equal(bad.code, 'INVALID_ARGUMENTS');
    assert.match(bad.message, /ripgrep refused the search: .*unclosed group/s);
    const ws = toolError(await h.call('search', { workspace_id: 'nope', query: 'x' }));
    assert.equal(ws.code, 'WORKSPACE_NOT_FOUND');
  });

  it('reports progress to a client that sent a progress token', async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const result = await h.client.callTool({ name: 'search', arguments: { workspace_id: 'proj', query: 'needle', max_results: 150 } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal(result.isError, undefined);
    assert.ok(seen.length >= 2, `got ${seen.length} progress notification(s)`);
    assert.deepEqual(seen[0], { progress: 0, total: 150, message: 'searching' });
    const last = seen[seen.length - 1];
    assert.equal(last?.progress, 150);
    assert.equal(last?.message, 'done');
    for (let i = 1; i < seen.length; i++) assert.ok((seen[i]?.progress ?? 0) > (seen[i - 1]?.progress ?? 0), 'progress only increases');
  });

  it('ends its progress with done also when nothing matched', async () => {
    const seen: { progress: number; total?: number; message?: string }[] = [];
    const result = await h.client.callTool({ name: 'search', arguments: { workspace_id: 'proj', query: 'no-such-text-anywhere-0x5f' } }, CallToolResultSchema, {
      onprogress: (p) => seen.push(p),
    });
    assert.equal((result.structuredContent as { matches: unknown[] }).matches.length, 0);
    assert.equal(seen[0]?.message, 'searching');
    assert.equal(seen[seen.length - 1]?.message, 'done');
    assert.ok((seen[seen.length - 1]?.progress ?? 0) > (seen[0]?.progress ?? 0), 'progress only increases');
  });
});

describe('search: the engine and its bounds', () => {
  let base: string;

  before(async () => {
    const files: Record<string, string> = {};
    const body = Array.from({ length: 400 }, (_, i) => `row ${i} lorem ipsum dolor sit amet hay`).join('\n') + '\n';
    for (let i = 0; i < 1500; i++) files[`big/d${i % 30}/f${i}.txt`] = body;
    files['big/huge-line.txt'] = 'hay' + 'z'.repeat(6 * 1024 * 1024) + '\n';
    base = await makeTree(files, 'codespace-search-big-');
  });
  after(async () => {
    await removeTree(base);
  });

  const request = (over: Partial<ContentSearchRequest> = {}): ContentSearchRequest => ({
    root: path.join(base, 'big'),
    query: 'hay',
    regex: false,
    caseSensitive: false,
    include: [],
    exclude: [],
    settings: DEFAULT_SEARCH_SETTINGS,
    maxResults: 1_000_000,
    contextLines: 0,
    maxLineChars: 500,
    maxTotalBytes: 1_000_000_000,
    timeoutMs: 60_000,
    signal: new AbortController().signal,
    ...over,
  });

  it('a record over the bound (one line of 6 MiB) is skipped, not buffered', async () => {
    const r = await new RipgrepSearch(SYSTEM_RG).run(request({ include: ['huge-line.txt'] }));
    assert.equal(r.matches.length, 0);
    assert.equal(r.skipped_long_lines, 1);
  });

  it('the byte budget stops the search, truncated', async () => {
    const r = await new RipgrepSearch(SYSTEM_RG).run(request({ maxTotalBytes: 10_000, include: ['d1/**'] }));
    assert.equal(r.truncated, true);
    assert.ok(r.matches.length < 400, `${r.matches.length} matches`);
  });

  it('past the time bound rg is killed and the partial result says timed_out (the tool adds a note)', async () => {
    const engine = new RipgrepContentSearch({ rgPath: SYSTEM_RG, source: 'explicit', maxTimeoutMs: 5 });
    const h = await connectHarness([{ root: path.join(base, 'big'), name: 'big', profile: 'read-only' }], { contentSearch: engine });
    try {
      const r = ok<SearchResult>(await h.call('search', { workspace_id: 'big', query: 'lorem', regex: true, max_results: 2000, exclude: ['huge-line.txt'] }));
      assert.equal(r.timed_out, true);
      assert.equal(r.truncated, true);
      assert.match(r.notes?.join('\n') ?? '', /stopped: the results are partial/);
    } finally {
      await h.close();
    }
  });

  it('an abort kills rg at once: CANCELLED, and the search ends long before it would have', async () => {
    const ac = new AbortController();
    let first = 0;
    const rg = new RipgrepSearch(SYSTEM_RG);
    const run = rg.run(request({
      query: '\\w+ \\w+ \\w+',
      regex: true,
      signal: ac.signal,
      onMatches: (n) => {
        if (first === 0) first = n;
        ac.abort();
      },
    }));
    await assert.rejects(run, (err: { code?: string }) => err.code === 'CANCELLED');
    assert.ok(first > 0, 'aborted after the first matches');
    assert.equal(rg.lastExit?.signal, 'SIGKILL', 'rg was killed, not left to finish');
  });

  it('a client cancellation (notifications/cancelled) reaches rg through the dispatcher', async () => {
    const recording = new RecordingSearch(new RipgrepContentSearch({ rgPath: SYSTEM_RG, source: 'explicit' }));
    const h = await connectHarness([{ root: path.join(base, 'big'), name: 'big', profile: 'read-only' }], { contentSearch: recording });
    try {
      const ac = new AbortController();
      const call = h.client.callTool({ name: 'search', arguments: { workspace_id: 'big', query: '\\w+ \\w+ \\w+ \\w+ \\w+ zzz', regex: true } }, CallToolResultSchema, {
        signal: ac.signal,
        onprogress: () => ac.abort('changed my mind'),
      });
      await assert.rejects(call);
      for (let i = 0; i < 200 && recording.outcomes.length === 0; i++) await new Promise((r) => setTimeout(r, 25));
      assert.deepEqual(recording.outcomes, ['rejected CANCELLED']);
    } finally {
      await h.close();
    }
  });

  it('from candidate locations, runs the first executable one; with none, says where it looked', () => {
    const found = new RipgrepContentSearch({ candidates: [path.join(base, 'no-such-rg'), SYSTEM_RG], source: 'vscode' });
    assert.deepEqual(found.engine(), { available: true, kind: 'ripgrep', path: SYSTEM_RG, source: 'vscode' });
    const none = new RipgrepContentSearch({ candidates: [path.join(base, 'no-such-rg')], source: 'vscode', missingReason: 'looked in one place' });
    assert.equal(none.engine().available, false);
    assert.equal(none.engine().reason, 'looked in one place');
  });

  it('without an engine: SEARCH_UNAVAILABLE at once, naming why (never a slow fallback)', async () => {
    const missing = new RipgrepContentSearch({ rgPath: path.join(base, 'no-such-rg'), source: 'explicit' });
    assert.equal(missing.engine().available, false);
    const h = await connectHarness([{ root: path.join(base, 'big'), name: 'big', profile: 'read-only' }], { contentSearch: missing });
    const none = await connectHarness([{ root: path.join(base, 'big'), name: 'big', profile: 'read-only' }]);
    try {
      const e = toolError(await h.call('search', { workspace_id: 'big', query: 'hay' }));
      assert.equal(e.code, 'SEARCH_UNAVAILABLE');
      assert.match(e.message, /No executable ripgrep at .*no-such-rg/);
      const d = toolError(await none.call('search', { workspace_id: 'big', query: 'hay' }));
      assert.equal(d.code, 'SEARCH_UNAVAILABLE');
    } finally {
      await h.close();
      await none.close();
    }
  });
});

describe('search: every reported path is confined', () => {
  let base: string;
  let root: string;

  before(async () => {
    base = await makeTree({ 'proj/in.txt': 'x\n', 'outside/secret.txt': 'x\n' }, 'codespace-search-confine-');
    root = path.join(base, 'proj');
    await fsp.symlink(path.join(base, 'outside', 'secret.txt'), path.join(root, 'swapped.txt'));
  });
  after(async () => {
    await removeTree(base);
  });

  it('a path the engine reports that resolves outside (a link swapped in mid-walk, "..") is left out, with a note', async () => {
    const line = (p: string) => ({ path: p, line: 1, column: 1, end_column: 2, text: 'x' });
    const lying: ContentSearch = {
      engine: () => ({ available: true, kind: 'ripgrep', source: 'explicit', path: '/fake' }),
      settings: () => DEFAULT_SEARCH_SETTINGS,
      search: () => Promise.resolve({ matches: [line('in.txt'), line('swapped.txt'), line('../outside/secret.txt'), line('gone.txt')], truncated: false, timed_out: false, errors: [], skipped_long_lines: 0 }),
    };
    const h = await connectHarness([{ root, name: 'proj', profile: 'read-only' }], { contentSearch: lying });
    try {
      const r = ok<SearchResult>(await h.call('search', { workspace_id: 'proj', query: 'x' }));
      assert.deepEqual(r.matches.map((m) => m.path), ['in.txt']);
      assert.equal(r.files_with_matches, 1);
      assert.match(r.notes?.join('\n') ?? '', /3 file\(s\) were left out because they resolve outside the workspace/);
    } finally {
      await h.close();
    }
  });
});
