import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { InMemoryLogger } from '../../src/base/logger';
import { ProcessSupervisor } from '../../src/features/processes/common/supervisor';
import { ChildProcessBackend } from '../../src/features/processes/node/childProcessBackend';
import type { ProcessIdentity } from '../../src/base/node/processIdentity';
import { SurvivorRegistry, reapSurvivors } from '../../src/features/processes/node/survivors';
import { identify, isSameProcessAlive } from '../../src/base/node/processIdentity';

/** A child of this test, leading its own process group like a supervised process; its end is awaited. */
interface Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<NodeJS.Signals | number | null>;
}

describe('crash survivors', () => {
  let dir: string;
  const children: Child[] = [];
  const registries: SurvivorRegistry[] = [];

  function start(args: string[] = ['1000']): Child {
    const proc = spawn('sleep', args, { detached: true, stdio: 'ignore' });
    assert.ok(proc.pid, 'sleep started');
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code)));
    const child = { proc, pid: proc.pid, exited };
    children.push(child);
    return child;
  }

  /** A registry of an extension host that has since died: its owner's start time matches nothing alive. */
  function deadHostRegistry(): SurvivorRegistry {
    const me = identify(process.pid) as ProcessIdentity;
    const r = new SurvivorRegistry({ directory: dir, logger: new InMemoryLogger(), owner: { ...me, start: `${me.start}-dead` } });
    registries.push(r);
    return r;
  }

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-survivors-'));
  });

  afterEach(async () => {
    // Only our own children, by pid, and only those still running.
    for (const c of children.splice(0)) {
      if (c.proc.exitCode === null && c.proc.signalCode === null) {
        try {
          process.kill(-c.pid, 'SIGKILL');
        } catch {
          // already gone
        }
        await c.exited;
      }
    }
    for (const r of registries.splice(0)) r.dispose();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('identifies a live process by pid and start time, and a gone one as gone', async () => {
    const c = start();
    const who = identify(c.pid);
    assert.ok(who, 'the child is identified');
    assert.equal(who.pid, c.pid);
    assert.notEqual(who.start, '');
    assert.equal(isSameProcessAlive(who), true);
    assert.equal(isSameProcessAlive({ ...who, start: `${who.start}0` }), false, 'another start time is another process');
    process.kill(-c.pid, 'SIGKILL');
    await c.exited;
    assert.equal(identify(c.pid), undefined);
    assert.equal(isSameProcessAlive(who), false);
  });

  it('rewrites the file on start and exit, and removes it when nothing is left', () => {
    const r = deadHostRegistry();
    const a = start();
    const b = start();
    assert.equal(r.record('p_a', a.pid, ['sleep', '1000']), true);
    assert.equal(r.record('p_b', b.pid, ['sleep', '1000']), true);
    const data = JSON.parse(fs.readFileSync(r.file, 'utf8')) as { processes: { pid: number; process_id: string; command: string[] }[] };
    assert.deepEqual(data.processes.map((p) => [p.process_id, p.pid]), [['p_a', a.pid], ['p_b', b.pid]]);
    assert.deepEqual(data.processes[0]?.command, ['sleep', '1000']);
    r.forget('p_a');
    assert.deepEqual((JSON.parse(fs.readFileSync(r.file, 'utf8')) as { processes: { process_id: string }[] }).processes.map((p) => p.process_id), ['p_b']);
    r.forget('p_b');
    assert.equal(fs.existsSync(r.file), false, 'an empty registry leaves no file');
    assert.deepEqual(fs.readdirSync(dir), [], 'no temporary file is left behind');
  });

  it('after a crash, the next start kills the recorded process group and clears the file', async () => {
    const crashed = deadHostRegistry();
    const c = start();
    assert.equal(crashed.record('p_1', c.pid, ['sleep', '1000']), true);
    // "Restart": a new extension host reads what the dead one left.
    const logger = new InMemoryLogger();
    const summary = await reapSurvivors({ directory: dir, logger });
    assert.equal(await c.exited, 'SIGKILL');
    assert.deepEqual(summary.ended.map((e) => e.pid), [c.pid]);
    assert.equal(summary.files, 1);
    assert.ok(logger.lines.some((l) => l.includes(`ended pid ${c.pid}`)), logger.lines.join('\n'));
    assert.equal(fs.existsSync(crashed.file), false, 'the file is cleared');
    const again = await reapSurvivors({ directory: dir, logger });
    assert.deepEqual(again, { ended: [], files: 0 });
  });

  it('kills the whole group the survivor leads, not just its leader', async () => {
    const crashed = deadHostRegistry();
    // A shell leading its group with a background child in that group.
    const proc = spawn('sh', ['-c', 'sleep 1000 & echo $!; wait'], { detached: true, stdio: ['ignore', 'pipe', 'ignore'] });
    const exited = new Promise<NodeJS.Signals | number | null>((resolve) => proc.once('exit', (code, signal) => resolve(signal ?? code)));
    children.push({ proc, pid: proc.pid as number, exited });
    const grandchild = await new Promise<number>((resolve) => proc.stdout?.once('data', (b: Buffer) => resolve(Number(b.toString().trim()))));
    const grandchildId = identify(grandchild);
    assert.ok(grandchildId, 'the background sleep runs');
    assert.equal(crashed.record('p_sh', proc.pid as number, ['sh', '-c', '…']), true);
    await reapSurvivors({ directory: dir, logger: new InMemoryLogger() });
    assert.equal(await exited, 'SIGKILL');
    // The grandchild is not our child, so nobody we wait on reports it: poll its identity until it is gone.
    for (let i = 0; i < 200 && isSameProcessAlive(grandchildId); i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(isSameProcessAlive(grandchildId), false, 'the background child of the group is gone too');
  });

  it('does not kill a live process whose pid matches but whose start time does not (pid reuse)', async () => {
    const c = start();
    const who = identify(c.pid) as ProcessIdentity;
    const dead = identify(process.pid) as ProcessIdentity;
    const forged = {
      version: 1,
      owner: { ...dead, start: `${dead.start}-dead` },
      processes: [{ ...who, start: String(Number(who.start) - 1), process_id: 'p_old', command: ['sleep', '1000'], started_at: new Date(0).toISOString() }],
    };
    fs.writeFileSync(path.join(dir, 'processes-1-forged.json'), JSON.stringify(forged));
    const summary = await reapSurvivors({ directory: dir, logger: new InMemoryLogger() });
    assert.deepEqual(summary.ended, []);
    assert.equal(summary.files, 1, 'the stale file is still read and cleared');
    assert.equal(isSameProcessAlive(who), true, 'the unrelated process with the recycled pid still runs');
    assert.equal(c.proc.exitCode, null);
    assert.equal(c.proc.signalCode, null);
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('leaves alone the processes of an extension host that still runs (another window on the same storage)', async () => {
    const live = new SurvivorRegistry({ directory: dir, logger: new InMemoryLogger() }); // owner: this live process
    registries.push(live);
    const c = start();
    assert.equal(live.record('p_live', c.pid, ['sleep', '1000']), true);
    const summary = await reapSurvivors({ directory: dir, logger: new InMemoryLogger() });
    assert.deepEqual(summary, { ended: [], files: 0 });
    assert.equal(isSameProcessAlive(identify(c.pid) as ProcessIdentity), true);
    assert.equal(fs.existsSync(live.file), true, 'the live owner keeps its file');
    live.dispose();
    assert.equal(fs.existsSync(live.file), false, 'a clean end removes it');
  });

  it('ignores a corrupt file and removes it', async () => {
    fs.writeFileSync(path.join(dir, 'processes-9-bad.json'), '{"version":1,"owner":');
    const summary = await reapSurvivors({ directory: dir, logger: new InMemoryLogger() });
    assert.deepEqual(summary, { ended: [], files: 1 });
    assert.deepEqual(fs.readdirSync(dir), []);
  });

  it('records nothing for a process that is already gone', async () => {
    const r = deadHostRegistry();
    const c = start(['0']);
    await c.exited;
    assert.equal(r.record('p_gone', c.pid, ['sleep', '0']), false);
    assert.equal(fs.existsSync(r.file), false);
  });

  it('follows the supervisor: a started process is on disk until it exits', async () => {
    const r = deadHostRegistry();
    const pipes = new ChildProcessBackend({ graceMs: 500 });
    const sup = new ProcessSupervisor({ backends: { tty: () => pipes, pipes: () => pipes } });
    const watching = r.watch(sup);
    const root = fs.realpathSync(os.tmpdir());
    try {
      const ws = { id: 'ws', name: 'ws', root, trusted: true, profile: 'exec' as const, canWrite: true, canExec: true };
      const { process_id } = await sup.exec(ws, ['sleep', '1000'], { cwd: root, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
      const pid = sup.info(process_id).pid;
      const data = JSON.parse(fs.readFileSync(r.file, 'utf8')) as { processes: { pid: number; process_id: string; start: string }[] };
      assert.deepEqual(data.processes.map((p) => [p.process_id, p.pid]), [[process_id, pid]]);
      assert.equal(data.processes[0]?.start, identify(pid)?.start);
      const status = await sup.terminate(process_id);
      assert.equal(status.termination, 'terminated');
      assert.equal(fs.existsSync(r.file), false, 'forgotten on exit');
    } finally {
      watching.dispose();
      await sup.disposeAll();
    }
  });
});
