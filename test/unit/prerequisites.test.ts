import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Missing {
  what: string;
  pkg: string;
  why: string;
}
/** The subset of scripts/prerequisites.mjs tested here. */
interface PrerequisitesModule {
  findOnPath(name: string, pathValue?: string): string | undefined;
  checkPrerequisites(options?: { needBuild?: boolean; pathValue?: string; includeDir?: string }): Missing[];
  installCommand(missing: Missing[], options?: { root?: boolean }): string;
  formatMissing(missing: Missing[], options?: { root?: boolean }): string;
  mayInstall(pathValue?: string, root?: boolean): boolean;
}

const REPO_ROOT = path.resolve(__dirname, '..', '..', '..');

describe('npm test checks what it needs from the machine first (scripts/prerequisites.mjs)', () => {
  let m: PrerequisitesModule;
  let tmp: string;
  let bin: string;
  let other: string;
  let include: string;

  /** An executable (or, with mode 0o644, a plain file) named `name` in `dir`. */
  async function program(dir: string, name: string, mode = 0o755): Promise<void> {
    const file = path.join(dir, name);
    await fsp.writeFile(file, '#!/bin/sh\nexit 0\n');
    await fsp.chmod(file, mode);
  }

  before(async () => {
    m = (await import(pathToFileURL(path.join(REPO_ROOT, 'scripts', 'prerequisites.mjs')).href)) as PrerequisitesModule;
    tmp = await fsp.mkdtemp(path.join(os.tmpdir(), 'codespace-prereq-'));
    bin = path.join(tmp, 'bin');
    other = path.join(tmp, 'other');
    include = path.join(tmp, 'include');
    for (const d of [bin, other, include]) await fsp.mkdir(d, { recursive: true });
  });
  after(async () => {
    await fsp.rm(tmp, { recursive: true, force: true });
  });

  it('finds a program in any PATH entry, skips empty entries and files that are not executable', async () => {
    await program(bin, 'rg', 0o644);
    await program(other, 'rg');
    assert.equal(m.findOnPath('rg', ['', bin, other].join(path.delimiter)), path.join(other, 'rg'));
    assert.equal(m.findOnPath('rg', bin), undefined);
    assert.equal(m.findOnPath('rg', ''), undefined);
  });

  it('an empty PATH: every program is missing, and one apt-get command names each package once', () => {
    const missing = m.checkPrerequisites({ pathValue: '' });
    assert.deepEqual(missing.map((x) => x.pkg), ['ripgrep', 'bubblewrap', 'git', 'chromium']);
    assert.equal(m.installCommand(missing, { root: false }), 'sudo apt-get update && sudo apt-get install -y --no-install-recommends ripgrep bubblewrap git chromium');
    assert.equal(m.installCommand([...missing, ...missing], { root: true }), 'apt-get update && apt-get install -y --no-install-recommends ripgrep bubblewrap git chromium');
    const text = m.formatMissing(missing, { root: false });
    for (const x of missing) assert.ok(text.includes(`${x.what} (Debian package ${x.pkg})`), text);
    assert.ok(text.endsWith(m.installCommand(missing, { root: false })), text);
  });

  it('only what is absent is named; build dependencies only while a VS Code host is to be built', async () => {
    for (const name of ['rg', 'bwrap', 'git', 'chromium', 'make', 'g++']) await program(bin, name);
    const pathValue = [other, bin].join(path.delimiter);
    assert.deepEqual(m.checkPrerequisites({ pathValue, includeDir: include }), []);
    await fsp.mkdir(path.join(include, 'X11', 'extensions'), { recursive: true });
    await fsp.writeFile(path.join(include, 'krb5.h'), '');
    await fsp.writeFile(path.join(include, 'X11', 'Xlib.h'), '');
    const build = m.checkPrerequisites({ needBuild: true, pathValue, includeDir: include });
    assert.deepEqual(build.map((x) => `${x.what}:${x.pkg}`), [
      'python3:python3',
      'pkg-config:pkg-config',
      'X11/extensions/XKBfile.h:libxkbfile-dev',
      'libsecret-1/libsecret/secret.h:libsecret-1-dev',
    ]);
    assert.match(m.installCommand(build, { root: false }), / python3 pkg-config libxkbfile-dev libsecret-1-dev$/);
  });

  it('installs by itself only as root with apt-get on PATH', async () => {
    await program(other, 'apt-get');
    assert.equal(m.mayInstall(other, true), true);
    assert.equal(m.mayInstall(other, false), false);
    assert.equal(m.mayInstall(bin, true), false);
  });
});
