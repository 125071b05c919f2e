// The sandbox fails closed: a protected file with other names (hard links), a renamed parent folder, a nested
// repository scan that cannot finish. Each case is arranged by one real sandboxed command for the next, as an attacker
// would, and run with real bwrap and real git.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { processStatusTool } from '../../src/features/processes/common/tools/processStatus';
import { workspaceInfoTool } from '../../src/features/files/common/workspaceInfo';
import type { IsolationSettings } from '../../src/features/processes/node/sandbox/commandSandbox';
import type { IncompleteProtection } from '../../src/features/processes/node/sandbox/protectionCheck';
import { NESTED_SCAN } from '../../src/features/processes/node/sandbox/sandboxInventory';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';

function bwrapUnavailable(): string | undefined {
  if (process.platform !== 'linux') return 'not Linux';
  const r = spawnSync('bwrap', ['--unshare-user', '--unshare-pid', '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--die-with-parent', 'true'], { encoding: 'utf8' });
  if (r.error) return `bwrap not runnable: ${r.error.message}`;
  if (r.status !== 0) return `bwrap fails: ${r.stderr.trim()}`;
  return undefined;
}

interface Protection {
  complete: boolean;
  gaps: string[];
  on_incomplete: string;
  commands: string;
}

describe('sandbox fails closed (real bwrap, real git)', function () {
  this.timeout(240_000);
  let f: ProcessToolsFixture;
  let onIncomplete: IncompleteProtection;
  let marker: string;

  before(function () {
    const why = bwrapUnavailable();
    if (why) {
      console.log(`      skipped: ${why}`);
      this.skip();
    }
  });

  beforeEach(async () => {
    onIncomplete = 'refuse';
    const isolation: IsolationSettings = { mode: () => 'required', network: () => 'block', gitWrites: () => 'none', maxProcesses: () => 512, incompleteProtection: () => onIncomplete };
    f = await processToolsFixture({ isolation });
    marker = path.join(f.tmp, 'PWNED');
  });

  afterEach(async () => {
    await f?.dispose();
  });

  /** Runs a script in the sandbox: its output, or the refusal's message when the command did not run. */
  async function run(script: string): Promise<{ out: string; refused?: string }> {
    let r: Record<string, unknown>;
    try {
      r = await f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', script], occupancy: 'shared' });
    } catch (err) {
      return { out: '', refused: `${(err as { code?: string }).code ?? ''}: ${err instanceof Error ? err.message : String(err)}` };
    }
    const id = r.process_id as string;
    const out = (await f.readAll(id)).replace(/\r\n/g, '\n');
    await f.call(processStatusTool, { process_id: id });
    return { out };
  }

  async function protection(): Promise<Protection> {
    const info = (await f.call(workspaceInfoTool, { workspace_id: 'proj' })) as { execution: { isolation: { protection: Protection } } };
    return info.execution.isolation.protection;
  }

  function gitOutside(args: string[], cwd: string): number | null {
    const home = path.join(f.tmp, 'outside-home');
    fs.mkdirSync(home, { recursive: true });
    return spawnSync('git', args, { cwd, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home, GIT_CONFIG_NOSYSTEM: '1' } }).status;
  }

  const fsmonitor = (): string => `printf '[core]\\n\\tfsmonitor = "touch ${marker}"\\n'`;

  it('a hard link to a protected file cannot be made inside (EXDEV across the read-only mount)', async () => {
    fs.mkdirSync(path.join(f.root, '.vscode'));
    fs.writeFileSync(path.join(f.root, '.vscode', 'settings.json'), '{}\n');
    const r = await run('ln .vscode/settings.json alias; echo "rc=$?"');
    assert.match(r.out, /Invalid cross-device link/, r.out);
    assert.match(r.out, /rc=1/);
    assert.equal(fs.existsSync(path.join(f.root, 'alias')), false);
  });

  it("a hard link made by one command to its new repository's config: the next command is refused, and workspace_info says why", async () => {
    const first = await run('git init -q sub && ln sub/.git/config cfg && echo LINKED');
    assert.match(first.out, /LINKED/, first.out);
    assert.equal(fs.statSync(path.join(f.root, 'sub', '.git', 'config')).nlink, 2);
    const second = await run(`${fsmonitor()} >> cfg && echo WROTE`);
    assert.equal(second.out, '', 'the command ran');
    assert.match(second.refused ?? '', /^EXEC_DISABLED: .*sub\/\.git\/config has 2 names \(hard links\)/);
    assert.match(second.refused ?? '', /incompleteProtection/);
    assert.doesNotMatch(fs.readFileSync(path.join(f.root, 'sub', '.git', 'config'), 'utf8'), /fsmonitor/);
    const p = await protection();
    assert.deepEqual([p.complete, p.on_incomplete, p.commands], [false, 'refuse', 'refused']);
    assert.ok(p.gaps.some((g) => g.startsWith('sub/.git/config has 2 names')), JSON.stringify(p));
    // Given a single name again, commands run.
    fs.rmSync(path.join(f.root, 'cfg'));
    assert.match((await run('echo back')).out, /back/);
    assert.deepEqual((await protection()).commands, 'run');
  });

  it('a protected file hard-linked before any command ran (.vscode/settings.json, .git/config) is refused too', async () => {
    assert.equal(gitOutside(['init', '-q', f.root], f.root), 0);
    fs.mkdirSync(path.join(f.root, '.vscode'));
    fs.writeFileSync(path.join(f.root, 'notes.json'), '{}\n');
    fs.linkSync(path.join(f.root, 'notes.json'), path.join(f.root, '.vscode', 'settings.json'));
    fs.linkSync(path.join(f.root, '.git', 'config'), path.join(f.root, 'config-copy'));
    const r = await run('echo RAN');
    assert.match(r.refused ?? '', /\.vscode\/settings\.json has 2 names/);
    assert.match(r.refused ?? '', /\.git\/config has 2 names/);
    assert.doesNotMatch(r.out, /RAN/);
  });

  it('the weaker mode the developer chose (protectKnown) runs it, and workspace_info says what is missing', async () => {
    await run('git init -q sub && ln sub/.git/config cfg');
    onIncomplete = 'protectKnown';
    const r = await run('echo RAN');
    assert.equal(r.refused, undefined);
    assert.match(r.out, /RAN/);
    const p = await protection();
    assert.deepEqual([p.complete, p.on_incomplete, p.commands], [false, 'protectKnown', 'run-protecting-known']);
    assert.ok(p.gaps.some((g) => g.includes('sub/.git/config has 2 names')));
  });

  it('renaming the parent of a protected repository carries the read-only mount along; the next command protects it under its new name', async () => {
    assert.equal(gitOutside(['init', '-q', path.join(f.root, 'vendor', 'lib')], f.root), 0);
    const r = await run(
      [
        `mv vendor moved && echo MOVED`,
        `(${fsmonitor()} >> moved/lib/.git/config) 2>/dev/null && echo PLANTED-moved`,
        `(mv moved/lib/.git moved/lib/g) 2>/dev/null && echo PLANTED-mountpoint`,
        'echo done',
      ].join('; '),
    );
    assert.match(r.out, /MOVED/);
    assert.doesNotMatch(r.out, /PLANTED/);
    const again = await run(`(${fsmonitor()} >> moved/lib/.git/config) 2>/dev/null && echo PLANTED-next; echo done`);
    assert.doesNotMatch(again.out, /PLANTED/);
    assert.match(again.out, /done/);
    gitOutside(['status'], path.join(f.root, 'moved', 'lib'));
    assert.equal(fs.existsSync(marker), false);
  });

  it(`a nested-repository scan over its bound (${NESTED_SCAN.maxDirectories} folders) refuses the next command; protectKnown runs it and says so`, async () => {
    const first = await run(`mkdir many && cd many && seq 1 ${NESTED_SCAN.maxDirectories + 10} | sed s/^/d/ | xargs mkdir && echo MADE`);
    assert.match(first.out, /MADE/, first.out);
    const refused = await run('echo RAN');
    assert.match(refused.refused ?? '', new RegExp(`more than ${NESTED_SCAN.maxDirectories} folders`));
    let p = await protection();
    assert.deepEqual([p.complete, p.commands], [false, 'refused']);
    onIncomplete = 'protectKnown';
    assert.match((await run('echo RAN')).out, /RAN/);
    p = await protection();
    assert.deepEqual([p.complete, p.commands], [false, 'run-protecting-known']);
    assert.ok(p.gaps.some((g) => g.includes(`more than ${NESTED_SCAN.maxDirectories} folders`)));
  });

  it('a folder the scan cannot read (a path longer than PATH_MAX, made by a command) refuses the next command', async () => {
    // Seventeen levels of 250-character names, made by walking down one relative name at a time: the deepest path no
    // longer fits PATH_MAX, so reading it fails (as root too, unlike a mode the owner could override).
    const name = 'n'.repeat(250);
    const first = await run(`perl -e 'for (1..17) { mkdir "${name}" or die "mkdir: $!"; chdir "${name}" or die "chdir: $!" } mkdir "sub"; mkdir "sub/.git" or die; print "MADE\n"'`);
    try {
      assert.match(first.out, /MADE/, first.out);
      const r = await run('echo RAN');
      assert.match(r.refused ?? '', /could not be read \(ENAMETOOLONG\)/);
      assert.doesNotMatch(r.out, /RAN/);
      const p = await protection();
      assert.deepEqual([p.complete, p.commands], [false, 'refused']);
    } finally {
      // fs.rmSync cannot remove what lies past PATH_MAX; File::Path walks down with chdir.
      spawnSync('perl', ['-MFile::Path=remove_tree', '-e', 'remove_tree($ARGV[0])', path.join(f.root, name)]);
    }
  });

  it(`folders deeper than ${NESTED_SCAN.maxDepth} levels refuse the next command`, async () => {
    const first = await run(`mkdir -p "deep/$(seq -s / ${NESTED_SCAN.maxDepth + 2})/sub/.git" && echo MADE`);
    assert.match(first.out, /MADE/, first.out);
    const r = await run('echo RAN');
    assert.match(r.refused ?? '', new RegExp(`deeper than ${NESTED_SCAN.maxDepth} levels`));
    assert.equal((await protection()).commands, 'refused');
  });
});
