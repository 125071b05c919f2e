import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { InvalidArgumentsError, ToolError } from '../../src/base/errors';
import { checkRelativePath, confine, isInside } from '../../src/base/paths';
import { NodeWorkspaceFs } from '../../src/kernel/node/nodeWorkspaceFs';
import { makeTree, removeTree, SpyWorkspaceFs } from './helpers/workspaceFixture';

describe('path confinement', () => {
  let base: string;
  let root: string;
  let outsideDir: string;

  before(async () => {
    base = await makeTree({ 'proj/src/a.ts': 'a\n', 'proj-secrets/key.txt': 'secret\n', 'outside/x.txt': 'x\n' }, 'codespace-paths-');
    root = path.join(base, 'proj');
    outsideDir = path.join(base, 'outside');
    await fsp.symlink(path.join(base, 'proj-secrets', 'key.txt'), path.join(root, 'link-file'));
    await fsp.symlink(outsideDir, path.join(root, 'link-dir'));
    await fsp.symlink(path.join(root, 'src'), path.join(root, 'inner-link'));
    await fsp.symlink(path.join(base, 'nowhere'), path.join(root, 'dangling'));
  });
  after(() => removeTree(base));

  const refused = ['../x', 'a/../../b', '/etc/passwd', '~/x', '~', '~alice/.ssh/id_rsa', 'a\0b', 'C:/x', 'C:\\x', 'C:', '..', 'src/../../proj-secrets/key.txt'];
  for (const p of refused) {
    it(`refuses ${JSON.stringify(p)} before touching the file system`, async () => {
      const spy = new SpyWorkspaceFs();
      await assert.rejects(confine(spy, root, p), (e: unknown) => ToolError.is(e, 'PATH_OUTSIDE_WORKSPACE'));
      assert.deepEqual(spy.calls, []);
    });
  }

  // The names policy: a name is taken as it is on disk. None of these leads anywhere but to one entry of the root.
  const names = ['a\\..\\b', 'back\\slash.txt', '%2e%2e', '%2e%2e/x', 'src/%2fetc', ' lead', 'trail ', 'new\nline', 'tab\tx', 'bell\u0007', '-rf', '#x', '~$lock.docx', 'a:b', '*?[]{}', 'caf\u00e9', 'cafe\u0301', '\u{1F600}.txt'];
  for (const p of names) {
    it(`takes the name ${JSON.stringify(p)} exactly as it is`, () => {
      assert.equal(checkRelativePath(p), p);
    });
  }

  it('refuses text no file name can hold (a lone surrogate) as INVALID_ARGUMENTS', () => {
    assert.throws(() => checkRelativePath('a\ud800b'), InvalidArgumentsError);
    assert.throws(() => checkRelativePath('\udc00'), InvalidArgumentsError);
  });

  it('accepts ordinary relative paths and normalises them', async () => {
    assert.equal(checkRelativePath('./src//a.ts'), 'src/a.ts');
    const c = await confine(new NodeWorkspaceFs(), root, 'src/a.ts');
    assert.equal(c.abs, path.join(root, 'src', 'a.ts'));
    assert.equal(c.rel, 'src/a.ts');
  });

  it('refuses the root as a file but allows it where asked (cwd)', async () => {
    assert.throws(() => checkRelativePath(''), (e: unknown) => ToolError.is(e, 'PATH_OUTSIDE_WORKSPACE'));
    assert.equal(checkRelativePath('', { allowRoot: true }), '');
  });

  it('treats a sibling sharing the prefix as outside', () => {
    assert.equal(isInside(root, path.join(base, 'proj-secrets', 'key.txt')), false);
    assert.equal(isInside(root, path.join(root, 'src')), true);
    assert.equal(isInside(root, root), true);
  });

  for (const [name, rel] of [['file', 'link-file'], ['directory', 'link-dir/x.txt'], ['dangling link', 'dangling'], ['new file under a symlinked folder', 'link-dir/new.txt'], ['new folder under a symlinked folder', 'link-dir/sub/new.txt']] as const) {
    it(`refuses a symlink pointing outside (${name})`, async () => {
      await assert.rejects(confine(new NodeWorkspaceFs(), root, rel), (e: unknown) => ToolError.is(e, 'PATH_OUTSIDE_WORKSPACE'));
    });
  }

  it('allows a symlink that stays inside', async () => {
    const c = await confine(new NodeWorkspaceFs(), root, 'inner-link/a.ts');
    assert.equal(c.rel, 'inner-link/a.ts');
  });

  it('allows creating a new file in a new folder inside', async () => {
    const c = await confine(new NodeWorkspaceFs(), root, 'brand/new/file.txt');
    assert.equal(c.rel, 'brand/new/file.txt');
  });

  it('resolves against the workspace root, never the process working directory', async () => {
    const cwd = process.cwd();
    process.chdir(outsideDir);
    try {
      const c = await confine(new NodeWorkspaceFs(), root, 'x.txt');
      assert.equal(c.abs, path.join(root, 'x.txt'));
    } finally {
      process.chdir(cwd);
    }
  });
});
