import * as assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ToolError } from '../../src/base/errors';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';

/**
 * A folder swapped for a symbolic link to the outside, between the workspace check and the spawn, must not
 * send the command outside. Another process swaps `sub` (by renaming a fresh link over it) between a link to a
 * folder inside and a link to a folder outside, as fast as it can, while commands run with cwd "sub".
 */
const SWAPPER = `
const fs = require('fs'), path = require('path');
const [dir, inside, outside, stop] = process.argv.slice(1);
const link = path.join(dir, 'sub');
let n = 0;
for (;;) {
  const tmp = path.join(dir, '.swap-' + (n % 2));
  try { fs.unlinkSync(tmp); } catch {}
  fs.symlinkSync(n % 2 ? outside : inside, tmp);
  fs.renameSync(tmp, link);
  n++;
  if (n % 64 === 0) {
    process.stdout.write(n + '\\n');
    if (fs.existsSync(stop)) break;
  }
}
process.stdout.write(n + '\\n');
`;

function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) out[name] = fs.readFileSync(path.join(dir, name), 'latin1');
  return out;
}

// Unsandboxed, and in the bubblewrap sandbox (where bwrap runs): there the verified folder is held open outside
// and compared inside after bwrap's chdir, so a swap in between refuses the command (exit 126, or bwrap cannot
// change to a folder outside, which the sandbox does not show) instead of running it elsewhere.
const bwrapRuns = process.platform === 'linux' && spawnSync('bwrap', ['--unshare-user', '--ro-bind', '/', '/', 'true']).status === 0;
const SANDBOX_REFUSAL = /working directory was replaced|Can't chdir/;

for (const sandboxed of [false, true]) describe(`exec_command cwd against a concurrent symlink swap${sandboxed ? ' (in the bubblewrap sandbox)' : ''}`, function () {
  this.timeout(120_000);
  let f: ProcessToolsFixture;

  before(function () {
    if (sandboxed && !bwrapRuns) {
      console.log('      skipped: bwrap cannot run here');
      this.skip();
    }
  });

  beforeEach(async () => {
    f = await processToolsFixture(sandboxed ? { isolation: { mode: () => 'required', network: () => 'block' } } : {});
  });

  const cleanups: (() => void)[] = [];

  afterEach(async () => {
    for (const c of cleanups.splice(0)) c();
    await f.dispose();
  });

  it('never runs a command outside the workspace, and the outside folder stays byte-identical', async () => {
    const inside = path.join(f.root, 'inside');
    // In the sandbox a folder under /tmp does not exist (its /tmp is private): take one it shows (read-only), next
    // to the compiled tests, so that only the check inside the sandbox stands between the command and it.
    const outside = sandboxed ? fs.mkdtempSync(path.join(__dirname, '.cwd-race-outside-')) : path.join(f.tmp, 'outside');
    if (sandboxed) fs.rmdirSync(outside);
    cleanups.push(() => fs.rmSync(outside, { recursive: true, force: true }));
    fs.mkdirSync(inside);
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'keep.txt'), 'outside, must not change\n');
    fs.symlinkSync(inside, path.join(f.root, 'sub'));
    const before = snapshot(outside);
    const stop = path.join(f.tmp, 'stop');

    const swapper = spawn(process.execPath, ['-e', SWAPPER, f.root, inside, outside, stop], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    swapper.stdout.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-64)));
    const swaps = (): number => Number(/(\d+)\n$/.exec(out)?.[1] ?? 0);
    const swapperDone = new Promise<void>((resolve) => swapper.once('exit', () => resolve()));

    const ran: string[] = [];
    let refused = 0;
    const escaped: string[] = [];
    const one = async (i: number): Promise<void> => {
      try {
        const r = await f.call(execCommandTool, {
          workspace_id: 'proj',
          command: ['sh', '-c', 'pwd -P; echo marker > marker.txt'],
          cwd: 'sub',
          tty: i % 4 === 3,
          occupancy: 'shared',
        });
        const where = (await f.readAll(r.process_id as string)).replace(/\r\n/g, '\n').trim();
        if (sandboxed && SANDBOX_REFUSAL.test(where)) {
          refused++;
          return;
        }
        ran.push(where);
        if (where !== inside) escaped.push(where);
      } catch (err) {
        if (!ToolError.is(err, 'PATH_OUTSIDE_WORKSPACE')) throw err;
        refused++;
      }
    };
    try {
      // At least 240 commands, and on until the swapper has made 3000 swaps (a fast machine finishes the commands
      // sooner than that) and a command has run (each one is refused while the link points outside: a swapper
      // that happens to win 240 times in a row must not leave the test with nothing that ran), at most a minute
      // and a half.
      const started = Date.now();
      for (let i = 0; i < 240 || ((swaps() < 3000 || ran.length === 0) && Date.now() - started < 90_000); i += 4) {
        await Promise.all([one(i), one(i + 1), one(i + 2), one(i + 3)]);
      }
    } finally {
      fs.writeFileSync(stop, '');
      await swapperDone;
    }

    assert.ok(swaps() >= 3000, `the swapper made ${swaps()} swaps`);
    assert.deepEqual(escaped, [], `${escaped.length} of ${ran.length} commands ran outside`);
    assert.deepEqual(snapshot(outside), before);
    assert.ok(ran.length > 0, `some commands ran (${refused} refused)`);
    if (sandboxed) console.log(`      ${ran.length} ran inside, ${refused} refused, ${swaps()} swaps`);
  });

  for (const tty of [false, true]) {
    it(`starts in the folder it verified, with PWD the logical path (${tty ? 'pty' : 'pipes'})`, async () => {
      fs.mkdirSync(path.join(f.root, 'inside'));
      fs.symlinkSync('inside', path.join(f.root, 'alias'));
      f.env = { ...f.env, PWD: '/somewhere/else' };
      const r = await f.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', 'echo "$PWD"; pwd -P; cd .. && pwd -P'], cwd: 'alias', tty });
      const lines = (await f.readAll(r.process_id as string)).replace(/\r\n/g, '\n').trim().split('\n');
      assert.deepEqual(lines, [path.join(f.root, 'alias'), path.join(f.root, 'inside'), f.root]);
    });
  }
});
