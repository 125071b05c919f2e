import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InMemoryLogger } from '../../src/base/logger';
import { FileJournal } from '../../src/base/node/fileJournal';
import { StateClaim, chooseStateFolder, sameWorkspaceFolders } from '../../src/kernel/node/stateFolder';
import type { ProcessIdentity } from '../../src/base/node/processIdentity';
import { identify } from '../../src/base/node/processIdentity';

const EXT = 'codespace.codespace-vscode';

describe('the state folder of a window (ledger, checkpoints, worktrees) across extension hosts', () => {
  let root: string;
  const children: ChildProcess[] = [];
  const self = identify(process.pid) as ProcessIdentity;

  /** Another extension host: a live process of this test, named as stateFolder names owners. */
  function liveOther(): ProcessIdentity {
    const proc = spawn('sleep', ['1000'], { stdio: 'ignore' });
    children.push(proc);
    const who = identify(proc.pid as number);
    assert.ok(who, 'sleep runs');
    return who;
  }

  /** An extension host that has ended: identified while it ran. */
  async function deadOther(): Promise<ProcessIdentity> {
    const proc = spawn('sleep', ['1000'], { stdio: 'ignore' });
    const who = identify(proc.pid as number) as ProcessIdentity;
    const gone = new Promise((r) => proc.once('exit', r));
    proc.kill('SIGKILL');
    await gone;
    return who;
  }

  /** `<root>/<hash>[-n]/<extension>`, made. */
  function folder(n: number): string {
    const dir = path.join(root, n === 0 ? 'abc123' : `abc123-${n}`, EXT);
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  const owner = (dir: string): { owner: ProcessIdentity; released: boolean } => JSON.parse(fs.readFileSync(path.join(dir, 'state-owner.json'), 'utf8'));

  beforeEach(() => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-state-'));
  });

  afterEach(() => {
    for (const c of children.splice(0)) c.kill('SIGKILL');
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('lists the folders VS Code gives the same workspace, in its order, and only those that exist', () => {
    const first = folder(0);
    const third = folder(2);
    assert.deepEqual(sameWorkspaceFolders(third), [first, third]);
    assert.deepEqual(sameWorkspaceFolders(first), [first, third]);
    // A folder VS Code just gave is listed even before it exists.
    const ninth = path.join(root, 'abc123-9', EXT);
    assert.deepEqual(sameWorkspaceFolders(ninth), [first, third, ninth]);
  });

  it('takes the folder VS Code gave when nobody else uses it, and says so in its owner file', async () => {
    const v = folder(0);
    const choice = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(choice.source, 'own');
    assert.equal(choice.dir, v);
    assert.deepEqual(owner(v).owner, self);
    assert.equal(owner(v).released, false);
    assert.equal(fs.existsSync(path.join(v, 'state-at')), false);
  });

  it('takes over the folder of an extension host whose window went away (it released it), and records where', async () => {
    const first = folder(0);
    const other = liveOther();
    const previous = (StateClaim.take(first, other)) as StateClaim;
    assert.ok(previous);
    fs.writeFileSync(path.join(first, 'operations.jsonl'), '{"kept":true}\n');
    previous.release();
    const v = folder(1); // what VS Code gives while the previous extension host still holds the first folder
    const choice = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(choice.source, 'released');
    assert.equal(choice.dir, first);
    assert.deepEqual(owner(first).owner, self);
    assert.equal(fs.readFileSync(path.join(v, 'state-at'), 'utf8'), 'abc123');
    // The previous one's window answering again does not give it the folder back: it has a successor.
    assert.equal(previous.reclaim(), false);
    assert.deepEqual(owner(first).owner, self);
  });

  it('never takes the folder of another live window (not released): its own folder instead', async () => {
    const first = folder(0);
    const other = liveOther();
    assert.ok(StateClaim.take(first, other));
    const v = folder(1);
    const choice = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(choice.source, 'own');
    assert.equal(choice.dir, v);
    assert.deepEqual(owner(first).owner, other);
  });

  it('an owner whose window answers again takes its folder back when nobody took it', async () => {
    const v = folder(0);
    const claim = (StateClaim.take(v, self)) as StateClaim;
    claim.release();
    assert.equal(owner(v).released, true);
    assert.equal(claim.isReleased, true);
    assert.equal(claim.reclaim(), true);
    assert.equal(owner(v).released, false);
    assert.equal(claim.isReleased, false);
  });

  it("follows the previous extension host's record of where the state went, once that one has ended", async () => {
    // The window's first extension host still holds the first folder (withdrawn); its successor took the state there
    // and ended; the next one is given `-1` again, where the successor recorded where the state is.
    const first = folder(0);
    const v = folder(1);
    const successor = await deadOther();
    assert.ok(StateClaim.take(first, successor));
    fs.writeFileSync(path.join(v, 'state-at'), 'abc123');
    const choice = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(choice.source, 'pointer');
    assert.equal(choice.dir, first);
    // A record naming anything but a folder of the same workspace is ignored.
    const w = folder(2);
    fs.writeFileSync(path.join(w, 'state-at'), '../../elsewhere');
    const other = chooseStateFolder({ vscodeDir: w, self: liveOther(), logger: new InMemoryLogger() });
    assert.equal(other.source, 'own');
    assert.equal(other.dir, w);
    assert.equal(fs.existsSync(path.join(w, 'state-at')), false, 'the stray record is removed');
  });

  it("a folder VS Code gave that a live window's state is in: a private folder, never shared", async () => {
    const v = folder(0);
    assert.ok(StateClaim.take(v, liveOther()));
    const choice = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(choice.source, 'private');
    assert.equal(choice.dir, path.join(v, `window-${process.pid}`));
  });

  it('a private folder another extension host left is taken again instead of a new one; a live one never', async () => {
    const v = folder(0);
    assert.ok(StateClaim.take(v, liveOther()));
    const inUse = path.join(v, 'window-1001');
    assert.ok(StateClaim.take(inUse, liveOther()));
    const older = path.join(v, 'window-1002');
    assert.ok(StateClaim.take(older, await deadOther()));
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(path.join(older, 'state-owner.json'), old, old);
    const newer = path.join(v, 'window-1003');
    (StateClaim.take(newer, liveOther()) as StateClaim).release();
    fs.writeFileSync(path.join(newer, 'ledger.jsonl'), 'kept\n');
    fs.mkdirSync(path.join(v, 'window-1004')); // no owner file: never offered
    fs.mkdirSync(path.join(v, 'windows-1005')); // not a private folder's name
    const elsewhere = path.join(root, 'elsewhere');
    const leftElsewhere = await deadOther();
    assert.ok(StateClaim.take(elsewhere, leftElsewhere));
    fs.symlinkSync(elsewhere, path.join(v, 'window-1006')); // a link, left by its owner: never followed

    const first = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(first.source, 'private');
    assert.equal(first.dir, newer, 'the most recently used of the left ones');
    assert.equal(fs.readFileSync(path.join(newer, 'ledger.jsonl'), 'utf8'), 'kept\n', 'its state is there');
    assert.deepEqual(owner(newer).owner, self);

    const second = chooseStateFolder({ vscodeDir: v, self: liveOther(), logger: new InMemoryLogger() });
    assert.equal(second.dir, older, 'then the older one; the live one and the one without an owner are skipped');

    const third = chooseStateFolder({ vscodeDir: v, self: liveOther(), logger: new InMemoryLogger() });
    assert.match(path.basename(third.dir), /^window-\d+$/);
    assert.ok(![inUse, older, newer, path.join(v, 'window-1004'), path.join(v, 'window-1006')].includes(third.dir), 'none left: a new one');
    assert.deepEqual(owner(elsewhere).owner, leftElsewhere, 'the folder behind the link was never taken');
  });

  it('a dead owner that never released its folder (a crash) leaves it free', async () => {
    const v = folder(0);
    assert.ok(StateClaim.take(v, await deadOther()));
    const choice = chooseStateFolder({ vscodeDir: v, self, logger: new InMemoryLogger() });
    assert.equal(choice.source, 'own');
  });

  it('a lock folder left by a process that died in the critical section is cleared', async () => {
    const v = folder(0);
    const lock = path.join(v, 'state-owner.lock');
    fs.mkdirSync(lock);
    const old = new Date(Date.now() - 60_000);
    fs.utimesSync(lock, old, old);
    assert.ok(StateClaim.take(v, self));
    assert.equal(fs.existsSync(lock), false);
  });

  it('extension hosts racing for one released folder: exactly one takes it', async () => {
    const first = folder(0);
    const previous = (StateClaim.take(first, liveOther())) as StateClaim;
    previous.release();
    // Each racer stays alive after it answered (as an extension host would), so a winner is never found dead.
    const script = `const { StateClaim } = require(${JSON.stringify(path.resolve(__dirname, '../../src/kernel/node/stateFolder.js'))});
      const { identify } = require(${JSON.stringify(path.resolve(__dirname, '../../src/base/node/processIdentity.js'))});
      try { process.stdout.write(StateClaim.take(${JSON.stringify(first)}, identify(process.pid)) ? 'took' : 'refused'); } catch (e) { process.stdout.write('error ' + e.message); }
      setTimeout(() => undefined, 60000);`;
    const outs = await Promise.all(
      Array.from({ length: 6 }, () => {
        const proc = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        children.push(proc);
        return new Promise<string>((resolve) => proc.stdout?.once('data', (d: Buffer) => resolve(d.toString())));
      }),
    );
    assert.equal(outs.filter((o) => o === 'took').length, 1, outs.join(', '));
    assert.equal(outs.filter((o) => o === 'refused').length, 5, outs.join(', '));
    assert.equal(owner(first).released, false);
  });

  it('a suspended journal writes nothing until it resumes', async () => {
    const dir = folder(0);
    const journal = new FileJournal({ directory: dir, fileName: 'operations.jsonl' });
    await journal.load();
    await journal.append({ type: 'a', n: 1 });
    await journal.suspend();
    await assert.rejects(journal.append({ type: 'a', n: 2 } as never), /suspended/);
    journal.resume();
    await journal.append({ type: 'a', n: 3 });
    const lines = fs.readFileSync(path.join(dir, 'operations.jsonl'), 'utf8').trim().split('\n');
    assert.deepEqual(lines.map((l) => (JSON.parse(l) as { n: number }).n), [1, 3]);
    await journal.close();
  });
});
