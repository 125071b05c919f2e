import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEFAULT_SEARCH_SETTINGS } from '../../src/features/files/common/contentSearch';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import { bundledRipgrepCandidates } from '../../src/features/files/vscode/ripgrepLocations';

/** Debian's ripgrep, copied into the fake layouts (a real binary, so the search really runs). */
const SYSTEM_RG = '/usr/bin/rg';

/** An application root laid out like a VS Code install: `rg` (a copy of the system's) at each relative path. */
async function fakeAppRoot(tmp: string, name: string, rgAt: readonly string[], mode = 0o755): Promise<string> {
  const appRoot = path.join(tmp, name);
  for (const rel of rgAt) {
    const file = path.join(appRoot, ...rel.split('/'));
    await fsp.mkdir(path.dirname(file), { recursive: true });
    await fsp.copyFile(SYSTEM_RG, file);
    await fsp.chmod(file, mode);
  }
  await fsp.mkdir(appRoot, { recursive: true });
  return appRoot;
}

describe("VS Code's ripgrep, found under its application root in either package layout", () => {
  let tmp: string;
  let workspace: string;
  const platformDir = `${process.platform}-${process.arch}`;

  before(async () => {
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-rg-layout-'));
    workspace = path.join(tmp, 'ws');
    await fsp.mkdir(workspace);
    await fsp.writeFile(path.join(workspace, 'a.txt'), 'one\nneedle here\n');
  });
  after(async () => {
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  /** The engine a window on `appRoot` gets, and one search through it. */
  async function searchWith(appRoot: string) {
    const engine = new RipgrepContentSearch({ candidates: bundledRipgrepCandidates(appRoot), source: 'vscode', missingReason: 'not found' });
    const info = engine.engine();
    if (!info.available) return { info, lines: undefined };
    const result = await engine.search({
      root: workspace,
      query: 'needle',
      regex: false,
      caseSensitive: true,
      include: [],
      exclude: [],
      settings: DEFAULT_SEARCH_SETTINGS,
      maxResults: 10,
      contextLines: 0,
      maxLineChars: 1000,
      maxTotalBytes: 100_000,
      timeoutMs: 60_000,
      signal: new AbortController().signal,
    });
    return { info, lines: result.matches.map((m) => `${m.path}:${m.line}`) };
  }

  it('@vscode/ripgrep/bin/rg (VS Code 1.100, code-server 4.100)', async () => {
    const appRoot = await fakeAppRoot(tmp, 'old', ['node_modules/@vscode/ripgrep/bin/rg']);
    const { info, lines } = await searchWith(appRoot);
    assert.equal(info.path, path.join(appRoot, 'node_modules', '@vscode', 'ripgrep', 'bin', 'rg'));
    assert.equal(info.source, 'vscode');
    assert.deepEqual(lines, ['a.txt:2']);
  });

  it('@vscode/ripgrep-universal/bin/<platform>-<arch>/rg (VS Code 1.139, code-server 4.139)', async () => {
    // The universal package holds every platform's binary; only this machine's may be chosen.
    const appRoot = await fakeAppRoot(tmp, 'universal', ['node_modules/@vscode/ripgrep-universal/bin/wrongos-wrongarch/rg', `node_modules/@vscode/ripgrep-universal/bin/${platformDir}/rg`]);
    const { info, lines } = await searchWith(appRoot);
    assert.equal(info.path, path.join(appRoot, 'node_modules', '@vscode', 'ripgrep-universal', 'bin', platformDir, 'rg'));
    assert.deepEqual(lines, ['a.txt:2']);
  });

  it('a packaged desktop build: the universal layout unpacked next to the asar archive', async () => {
    const appRoot = await fakeAppRoot(tmp, 'desktop', [`node_modules.asar.unpacked/@vscode/ripgrep-universal/bin/${platformDir}/rg`]);
    const { info, lines } = await searchWith(appRoot);
    assert.equal(info.path, path.join(appRoot, 'node_modules.asar.unpacked', '@vscode', 'ripgrep-universal', 'bin', platformDir, 'rg'));
    assert.deepEqual(lines, ['a.txt:2']);
  });

  it('only other platforms, or a binary that is not executable: unavailable, with the reason', async () => {
    const foreign = await fakeAppRoot(tmp, 'foreign', ['node_modules/@vscode/ripgrep-universal/bin/wrongos-wrongarch/rg']);
    const notExecutable = await fakeAppRoot(tmp, 'noexec', [`node_modules/@vscode/ripgrep-universal/bin/${platformDir}/rg`], 0o644);
    for (const appRoot of [foreign, notExecutable]) {
      const { info } = await searchWith(appRoot);
      assert.equal(info.available, false, appRoot);
      assert.equal(info.reason, 'not found');
    }
  });

  it('names both layouts in both folders, the single-binary layout first, for each platform', () => {
    assert.deepEqual(bundledRipgrepCandidates('/app', 'win32', 'arm64').map((p) => path.relative('/app', p).split(path.sep).join('/')), [
      'node_modules/@vscode/ripgrep/bin/rg.exe',
      'node_modules/@vscode/ripgrep-universal/bin/win32-arm64/rg.exe',
      'node_modules.asar.unpacked/@vscode/ripgrep/bin/rg.exe',
      'node_modules.asar.unpacked/@vscode/ripgrep-universal/bin/win32-arm64/rg.exe',
    ]);
  });
});
