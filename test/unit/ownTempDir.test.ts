import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ownTempDir, sweepAbandoned } from '../../src/base/node/ownTempDir';

describe('own temporary folders', () => {
  let root: string;

  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'own-tmp-')));
  });

  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  /** A pid whose process has ended (and was reaped). */
  function endedPid(): number {
    const r = spawnSync('/bin/sh', ['-c', 'echo $$']);
    return Number(String(r.stdout).trim());
  }

  it('is private, named by this process, and removed by its owner', () => {
    const own = ownTempDir('cs-test-', root);
    assert.match(path.basename(own.path), new RegExp(`^cs-test-${process.pid}-[A-Za-z0-9]{6}$`));
    assert.equal(fs.statSync(own.path).mode & 0o777, 0o700);
    fs.writeFileSync(path.join(own.path, 'f'), 'x');
    own.remove();
    own.remove();
    assert.equal(fs.existsSync(own.path), false);
  });

  it('a new one removes the folders of ended processes, and nothing else', async () => {
    const dead = path.join(root, `cs-test-${endedPid()}-abcDEF`);
    fs.mkdirSync(path.join(dead, 'inner'), { recursive: true });
    const child = spawn('/bin/sh', ['-c', 'sleep 30'], { stdio: 'ignore' });
    try {
      const live = path.join(root, `cs-test-${child.pid as number}-abcDEF`);
      fs.mkdirSync(live);
      const mine = path.join(root, `cs-test-${process.pid}-abcDEF`);
      fs.mkdirSync(mine);
      // Named like a dead one's, but a link (to a folder that must survive), a file, and other names.
      const target = path.join(root, 'target');
      fs.mkdirSync(target);
      const link = path.join(root, `cs-test-${endedPid()}-linkkk`);
      fs.symlinkSync(target, link);
      const file = path.join(root, `cs-test-${endedPid()}-fileee`);
      fs.writeFileSync(file, 'x');
      const other = path.join(root, `cs-test-abc-${endedPid()}`);
      fs.mkdirSync(other);
      const unprefixed = path.join(root, `cs-other-${endedPid()}-abcDEF`);
      fs.mkdirSync(unprefixed);
      const own = ownTempDir('cs-test-', root);
      assert.equal(fs.existsSync(dead), false, 'the ended process leaves nothing');
      for (const kept of [live, mine, target, link, file, other, unprefixed, own.path]) assert.ok(fs.existsSync(kept) || fs.lstatSync(kept).isSymbolicLink(), `${path.basename(kept)} was kept`);
      assert.ok(fs.lstatSync(link).isSymbolicLink());
      own.remove();
    } finally {
      child.kill('SIGKILL');
    }
  });

  it('a missing root is no error', () => {
    assert.doesNotThrow(() => sweepAbandoned('cs-test-', path.join(root, 'missing')));
  });
});
