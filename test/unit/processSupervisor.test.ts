import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import { ToolError } from '../../src/base/errors';
import type { Workspace } from '../../src/kernel/workspaces';
import type { ProcessBackend } from '../../src/features/processes/common/processBackend';
import type { Clock, ProcessSupervisorOptions, ProcessStatus } from '../../src/features/processes/common/supervisor';
import { ProcessSupervisor } from '../../src/features/processes/common/supervisor';
import { ChildProcessBackend } from '../../src/features/processes/node/childProcessBackend';
import { NodePtyBackend } from '../../src/features/processes/node/nodePtyBackend';
import type { ProcessEntry } from '../../src/features/processes/node/processTable';
import { descendantsOf, isLive, listProcesses } from '../../src/features/processes/node/processTable';
import { ScriptedHandle } from './helpers/scriptedHandle';

const GRACE_MS = 600;
const root = fs.realpathSync(os.tmpdir());
const baseEnv: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? root, LANG: 'C.UTF-8' };

function workspace(id = 'ws'): Workspace {
  return { id, name: id, root, trusted: true, profile: 'exec', canWrite: true, canExec: true };
}

const supervisors: ProcessSupervisor[] = [];

function supervisor(options: Partial<ProcessSupervisorOptions> = {}): ProcessSupervisor {
  const pty = new NodePtyBackend({ graceMs: GRACE_MS });
  const pipes = new ChildProcessBackend({ graceMs: GRACE_MS });
  const sup = new ProcessSupervisor({ backends: { tty: () => pty, pipes: () => pipes }, ...options });
  supervisors.push(sup);
  return sup;
}

async function run(sup: ProcessSupervisor, command: string[], opts: { tty?: boolean; occupancy?: 'exclusive' | 'shared'; env?: Record<string, string>; timeoutMs?: number; ws?: Workspace } = {}): Promise<string> {
  const { process_id, dispatch_status } = await sup.exec(opts.ws ?? workspace(), command, {
    cwd: root,
    tty: opts.tty ?? false,
    occupancy: opts.occupancy ?? 'exclusive',
    env: opts.env ?? baseEnv,
    timeoutMs: opts.timeoutMs ?? 0,
  });
  assert.equal(dispatch_status, 'confirmed');
  return process_id;
}

/** Reads until eof (or the deadline), returning all output. */
async function readAll(sup: ProcessSupervisor, id: string, deadlineMs = 15_000): Promise<string> {
  let cursor = 0;
  let out = '';
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const r = await sup.read(id, cursor, 65536, 1000);
    out += r.chunk;
    cursor = r.cursor;
    if (r.eof) return out;
  }
  throw new Error(`no eof within ${deadlineMs} ms; output so far: ${JSON.stringify(out.slice(-500))}`);
}

async function readUntil(sup: ProcessSupervisor, id: string, pattern: RegExp, deadlineMs = 10_000): Promise<string> {
  let cursor = 0;
  let out = '';
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    const r = await sup.read(id, cursor, 65536, 500);
    out += r.chunk;
    cursor = r.cursor;
    if (pattern.test(out)) return out;
    if (r.eof) break;
  }
  throw new Error(`${pattern} not seen; output: ${JSON.stringify(out.slice(-500))}`);
}

async function until<T>(probe: () => Promise<T | undefined> | T | undefined, what: string, deadlineMs = 10_000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function waitExited(sup: ProcessSupervisor, id: string): Promise<ProcessStatus> {
  return until(() => {
    const s = sup.status(id);
    return s.state === 'exited' ? s : undefined;
  }, `process ${id} to exit`);
}

function comm(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/** The process and all its live descendants. */
async function tree(pid: number): Promise<ProcessEntry[]> {
  const table = await listProcesses();
  const self = table.find((e) => e.pid === pid && isLive(e));
  return [...(self ? [self] : []), ...descendantsOf(pid, table)];
}

async function stillAlive(entries: readonly ProcessEntry[]): Promise<ProcessEntry[]> {
  const table = await listProcesses();
  return entries.filter((e) => table.some((t) => t.pid === e.pid && t.start === e.start && isLive(t)));
}

const linux = process.platform === 'linux';

describe('process supervisor (real processes)', function () {
  this.timeout(30_000);

  afterEach(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.disposeAll()));
  });

  describe('spawn, output and status', () => {
    for (const tty of [false, true]) {
      it(`runs a command and reports its exit (${tty ? 'pty' : 'pipes'})`, async () => {
        const sup = supervisor();
        const id = await run(sup, ['/bin/echo', 'agent-smoke'], { tty });
        assert.match(id, /^p_[0-9a-f]{16}$/);
        const out = await readAll(sup, id);
        assert.equal(out.replace(/\r\n/g, '\n'), 'agent-smoke\n');
        const s = sup.status(id);
        assert.equal(s.state, 'exited');
        assert.equal(s.termination, 'exited');
        assert.equal(s.exit_code, 0);
        assert.equal(s.tty, tty);
        assert.deepEqual(s.command, ['/bin/echo', 'agent-smoke']);
        assert.ok(s.ended_at !== undefined && s.ended_at >= s.started_at);
      });
    }

    it('reports a non-zero exit code and combines stderr with stdout', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sh', '-c', 'echo out; echo err >&2; exit 3']);
      const out = await readAll(sup, id);
      assert.match(out, /out/);
      assert.match(out, /err/);
      const s = sup.status(id);
      assert.equal(s.termination, 'exited');
      assert.equal(s.exit_code, 3);
    });

    it('goes from running to exited and then eof', async () => {
      const sup = supervisor();
      // The process waits for a line before it goes on, so it is still running at the first read however slow the
      // machine (a fixed sleep was not: under load the read came after the exit).
      const id = await run(sup, ['sh', '-c', 'echo a; read go; echo b']);
      assert.equal(sup.status(id).state, 'running');
      assert.equal(sup.status(id).termination, undefined);
      const first = await sup.read(id, 0, 1000, 5000);
      assert.equal(first.eof, false);
      await sup.write(id, 'go\n');
      const s = await waitExited(sup, id);
      assert.equal(s.termination, 'exited');
      const rest = await readAll(sup, id);
      assert.equal(rest, 'a\nb\n');
      const again = await sup.read(id, 4, 1000, 0);
      assert.equal(again.eof, true);
      assert.equal(again.chunk, '');
    });

    it('passes argv literally: no shell interprets ; $(id) backticks && or quotes', async () => {
      const sup = supervisor();
      const args = ['a;b', '$(id)', '`id`', '&&', 'echo', 'pwned', '|', 'x>y', "'q'", '"dq"', '*', '$HOME'];
      const id = await run(sup, ['/bin/echo', ...args]);
      const out = await readAll(sup, id);
      assert.equal(out, args.join(' ') + '\n');
      assert.ok(!fs.existsSync(`${root}/y`));
    });

    it('gives unique random ids', async () => {
      const sup = supervisor();
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add(await run(sup, ['true'], { occupancy: 'shared' }));
      assert.equal(ids.size, 5);
    });

    it('fires start, output and exit events', async () => {
      const sup = supervisor();
      const seen: string[] = [];
      let bytes = 0;
      sup.onDidStart((info) => seen.push(`start ${info.command.join(' ')} ${info.pid > 0}`));
      sup.onDidOutput((_id, b) => (bytes += b.length));
      const exited = new Promise<ProcessStatus>((resolve) => sup.onDidExit((_id, s) => resolve(s)));
      const id = await run(sup, ['/bin/echo', 'hello']);
      const s = await exited;
      assert.equal(s.process_id, id);
      assert.equal(s.exit_code, 0);
      assert.deepEqual(seen, ['start /bin/echo hello true']);
      assert.equal(bytes, 6);
      assert.equal(new TextDecoder().decode(sup.retainedOutput(id).bytes), 'hello\n');
    });

    it('refuses a program that does not exist, without occupying the workspace', async () => {
      const sup = supervisor();
      for (const tty of [false, true]) {
        await assert.rejects(run(sup, ['definitely-not-a-program-xyz'], { tty }), (e: unknown) => ToolError.is(e, 'NOT_FOUND'));
        await assert.rejects(run(sup, ['./no/such/file'], { tty }), (e: unknown) => ToolError.is(e, 'NOT_FOUND'));
      }
      assert.equal(sup.occupant('ws'), undefined);
      assert.deepEqual(sup.list(), []);
    });

    it('reports a missing working directory', async () => {
      const sup = supervisor();
      await assert.rejects(sup.exec(workspace(), ['true'], { cwd: `${root}/codespace-no-such-dir-${process.pid}`, env: baseEnv }), (e: unknown) => ToolError.is(e, 'NOT_FOUND'));
    });

    it('answers EXEC_DISABLED for tty when node-pty cannot load, and pipes still work', async () => {
      const broken = new NodePtyBackend({
        load: () => {
          throw new Error('simulated: cannot load native module');
        },
      });
      const pipes = new ChildProcessBackend({ graceMs: GRACE_MS });
      const sup = new ProcessSupervisor({ backends: { tty: () => broken, pipes: () => pipes } });
      supervisors.push(sup);
      await assert.rejects(run(sup, ['true'], { tty: true }), (e: unknown) => ToolError.is(e, 'EXEC_DISABLED') && /without "tty"/.test(e.hint ?? ''));
      assert.deepEqual(sup.capabilities(), { available: true, pty: false, resize: false, lifetime: 'vscode-window' });
      const id = await run(sup, ['/bin/echo', 'ok']);
      assert.equal(await readAll(sup, id), 'ok\n');
    });

    it('refuses a workspace whose profile forbids exec', async () => {
      const sup = supervisor();
      const ro: Workspace = { ...workspace(), profile: 'write', canExec: false };
      await assert.rejects(run(sup, ['true'], { ws: ro }), (e: unknown) => ToolError.is(e, 'EXEC_DISABLED'));
    });
  });

  describe('output a backend did not deliver', () => {
    it('is a lost range to the reader and an event to the mirror, between the output before and after', async () => {
      let handle: ScriptedHandle | undefined;
      const backend: ProcessBackend = { kind: 'pty', available: () => true, spawn: (o) => Promise.resolve((handle = new ScriptedHandle(o.tty))) };
      const sup = new ProcessSupervisor({ backends: { tty: () => backend, pipes: () => backend } });
      supervisors.push(sup);
      const skips: [string, number][] = [];
      sup.onDidSkip((id, bytes) => skips.push([id, bytes]));
      const id = await run(sup, ['flood'], { tty: true });
      const h = handle as ScriptedHandle;
      h.events.fireData(Buffer.from('first '));
      const start = await sup.read(id, 0, 65536, 0);
      assert.equal(start.chunk, 'first ', 'the output before the gap');
      h.events.fireSkip(1000);
      h.events.fireData(Buffer.from('last'));
      h.events.fireExit({ exitCode: 0 });
      assert.deepEqual(skips, [[id, 1000]]);
      const after = await sup.read(id, start.cursor, 65536, 1000);
      assert.equal(after.output_lost, true);
      assert.deepEqual(after.lost, { from: 6, to: 1006 }, 'exactly the bytes that never arrived');
      assert.equal(after.chunk, 'last');
      assert.equal(after.cursor, 1010);
      assert.equal(after.eof, true);
    });
  });

  describe('long-poll reads', () => {
    it('returns early when output arrives', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sh', '-c', 'sleep 0.3; echo late; sleep 1000']);
      const t0 = Date.now();
      const r = await sup.read(id, 0, 1000, 20_000);
      assert.ok(Date.now() - t0 < 10_000, 'returned before wait_ms');
      assert.equal(r.chunk, 'late\n');
      assert.equal(r.eof, false);
    });

    it('returns early on exit with eof', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sleep', '0.3']);
      const t0 = Date.now();
      const r = await sup.read(id, 0, 1000, 20_000);
      assert.ok(Date.now() - t0 < 10_000);
      assert.equal(r.eof, true);
      assert.equal(sup.status(id).termination, 'exited');
    });

    it('returns after wait_ms with nothing when nothing happens', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sleep', '1000']);
      const t0 = Date.now();
      const r = await sup.read(id, 0, 1000, 300);
      assert.ok(Date.now() - t0 >= 250);
      assert.deepEqual(r, { chunk: '', cursor: 0, eof: false, output_lost: false, retained_from: 0 });
    });

    it('stops waiting when the request is aborted', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sleep', '1000']);
      const ac = new AbortController();
      setTimeout(() => ac.abort(), 100);
      const t0 = Date.now();
      await sup.read(id, 0, 1000, 20_000, ac.signal);
      assert.ok(Date.now() - t0 < 5_000);
    });
  });

  describe('timeouts and termination', () => {
    it('ends a command at the operator timeout with termination "timeout"', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sleep', '1000'], { timeoutMs: 300 });
      const s = await waitExited(sup, id);
      assert.equal(s.termination, 'timeout');
      assert.equal(s.exit_code, undefined);
      assert.equal(s.signal, 'SIGTERM');
    });

    for (const tty of [false, true]) {
      it(`terminate of sh -c 'sleep 1000 & sleep 1000' leaves nothing alive (${tty ? 'pty' : 'pipes'})`, async function () {
        if (!linux) this.skip();
        const sup = supervisor();
        const id = await run(sup, ['sh', '-c', 'sleep 1000 & sleep 1000'], { tty });
        const pid = sup.info(id).pid;
        const procs = await until(async () => {
          const t = await tree(pid);
          return t.filter((e) => comm(e.pid) === 'sleep').length >= 2 ? t : undefined;
        }, 'both sleeps to start');
        const s = await sup.terminate(id);
        assert.equal(s.state, 'exited');
        assert.equal(s.termination, 'terminated');
        assert.deepEqual(await stillAlive(procs), []);
        // Idempotent.
        assert.equal((await sup.terminate(id)).termination, 'terminated');
      });

      it(`kills a child that traps SIGTERM after the grace period (${tty ? 'pty' : 'pipes'})`, async function () {
        if (!linux) this.skip();
        const sup = supervisor();
        const id = await run(sup, ['sh', '-c', 'trap "" TERM; echo ready; sleep 1000; echo survived'], { tty });
        await readUntil(sup, id, /ready/);
        const procs = await tree(sup.info(id).pid);
        const t0 = Date.now();
        const s = await sup.terminate(id);
        assert.ok(Date.now() - t0 >= GRACE_MS - 100, 'waited for the grace period');
        assert.equal(s.termination, 'terminated');
        assert.equal(s.signal, 'SIGKILL');
        assert.deepEqual(await stillAlive(procs), []);
      });
    }

    it('also ends descendants that left the process group (setsid)', async function () {
      if (!linux || !fs.existsSync('/usr/bin/setsid')) this.skip();
      const sup = supervisor();
      const id = await run(sup, ['sh', '-c', 'setsid sleep 1000 & sleep 1000']);
      const pid = sup.info(id).pid;
      // /proc is read a process at a time: a sleep can show its new name before its new group, so wait for both.
      const procs = await until(async () => {
        const t = await tree(pid);
        return t.filter((e) => comm(e.pid) === 'sleep').length >= 2 && t.some((e) => e.pgid !== pid) ? t : undefined;
      }, 'both sleeps to start, one of them in another process group');
      await sup.terminate(id);
      assert.deepEqual(await stillAlive(procs), []);
    });

    it('sweeps background jobs left behind when the command exits on its own', async function () {
      if (!linux) this.skip();
      const sup = supervisor();
      const id = await run(sup, ['sh', '-c', 'sleep 1000 & echo $!']);
      const out = await readAll(sup, id);
      const bg = Number(out.trim());
      assert.ok(bg > 0);
      assert.equal(sup.status(id).termination, 'exited');
      await until(async () => ((await listProcesses()).some((e) => e.pid === bg && isLive(e)) ? undefined : true), 'the background job to be swept');
    });

    it('disposeAll ends every process and refuses new ones', async () => {
      const sup = supervisor();
      const a = await run(sup, ['sleep', '1000'], { occupancy: 'shared' });
      const b = await run(sup, ['sleep', '1000'], { tty: true, occupancy: 'shared' });
      await sup.disposeAll();
      assert.equal(sup.status(a).termination, 'terminated');
      assert.equal(sup.status(b).termination, 'terminated');
      await assert.rejects(run(sup, ['true']), (e: unknown) => ToolError.is(e, 'EXEC_DISABLED'));
    });
  });

  describe('input and terminal size', () => {
    it('round-trips stdin through cat (pipes)', async () => {
      const sup = supervisor();
      const id = await run(sup, ['cat']);
      assert.equal(await sup.write(id, 'ping €\n'), 9);
      const out = await readUntil(sup, id, /ping €\n/);
      assert.equal(out, 'ping €\n');
      await sup.terminate(id);
      await assert.rejects(sup.write(id, 'x'), (e: unknown) => ToolError.is(e, 'PROCESS_EXITED'));
    });

    it('round-trips input through cat on a terminal', async () => {
      const sup = supervisor();
      const id = await run(sup, ['cat'], { tty: true });
      await sup.write(id, 'pong\n');
      const out = await readUntil(sup, id, /pong\r\n[^]*pong\r\n/);
      assert.match(out, /pong/);
    });

    it('spawns terminals at 24x80 and resizes them', async () => {
      const sup = supervisor();
      const first = await run(sup, ['stty', 'size'], { tty: true });
      assert.equal((await readAll(sup, first)).trim(), '24 80');
      const id = await run(sup, ['sh', '-c', 'sleep 0.3; stty size'], { tty: true });
      await sup.resize(id, 40, 120);
      assert.equal((await readAll(sup, id)).trim(), '40 120');
      await assert.rejects(sup.resize(id, 10, 10), (e: unknown) => ToolError.is(e, 'PROCESS_EXITED'));
    });

    it('answers NOT_A_TTY when resizing a pipe process, and validates the size', async () => {
      const sup = supervisor();
      const id = await run(sup, ['sleep', '1000']);
      await assert.rejects(sup.resize(id, 40, 120), (e: unknown) => ToolError.is(e, 'NOT_A_TTY'));
      const t = await run(sup, ['sleep', '1000'], { tty: true, occupancy: 'shared' });
      await assert.rejects(sup.resize(t, 0, 80), RangeError);
      await assert.rejects(sup.resize(t, 24, 1001), RangeError);
    });
  });

  describe('environment', () => {
    it('never passes CODESPACE_ variables or registered secrets to a child', async () => {
      const sup = supervisor();
      const token = 'tok_9f8e7d6c5b4a39281706';
      const reg = sup.addSecret(token);
      const env = {
        ...baseEnv,
        CODESPACE_TOKEN: 'anything',
        codespace_inbox_token: 'anything',
        STOLEN: token,
        HEADER: `Authorization: Bearer ${token}`,
        KEEP_ME: 'visible',
      };
      for (const tty of [false, true]) {
        const id = await run(sup, ['env'], { tty, env });
        const out = await readAll(sup, id);
        assert.match(out, /KEEP_ME=visible/);
        assert.doesNotMatch(out, /codespace_/i);
        assert.ok(!out.includes(token));
        assert.doesNotMatch(out, /STOLEN|HEADER/);
      }
      reg.dispose();
      const id = await run(sup, ['env'], { env: { ...baseEnv, NOW_OK: token } });
      assert.ok((await readAll(sup, id)).includes(`NOW_OK=${token}`));
    });
  });

  describe('secrets still loading (awaitSecrets)', () => {
    it('a command waits for them, then starts without them in its environment; a read waits too', async () => {
      const sup = supervisor();
      const early = await run(sup, ['echo', 'started before']);
      const token = 'tok_0a1b2c3d4e5f60718293';
      let loaded!: () => void;
      sup.awaitSecrets(new Promise<void>((resolve) => (loaded = resolve)));
      let started = false;
      const exec = run(sup, ['env'], { occupancy: 'shared', env: { ...baseEnv, STOLEN: token } }).then((id) => {
        started = true;
        return id;
      });
      let read = false;
      const reading = sup.read(early, 0, 65536, 0).then((r) => {
        read = true;
        return r;
      });
      await new Promise((r) => setTimeout(r, 200));
      assert.equal(started, false, 'no command starts while the secrets load');
      assert.equal(read, false, 'no output is read while the secrets load');
      sup.addSecret(token);
      loaded();
      const id = await exec;
      assert.ok(!(await readAll(sup, id)).includes(token), 'scrubbed with the secret registered meanwhile');
      assert.match((await reading).chunk + (await readAll(sup, early)), /started before/);
      // A failed load does not hold commands forever (the extension shuts down in that case).
      sup.awaitSecrets(Promise.reject(new Error('keychain locked')));
      assert.match(await readAll(sup, await run(sup, ['echo', 'after']), 5000), /after/);
    });
  });

  describe('memory under a flood', () => {
    for (const tty of [false, true]) {
      it(`keeps retained output bounded while yes floods for a while (${tty ? 'pty' : 'pipes'})`, async () => {
        const capacity = 256 * 1024;
        const sup = supervisor({ limits: () => ({ retainedOutputBytes: capacity }) });
        const rssBefore = process.memoryUsage().rss;
        const id = await run(sup, ['yes', 'flood-line-of-text'], { tty });
        await new Promise((r) => setTimeout(r, tty ? 1500 : 2500));
        const stats = sup.outputStats(id);
        assert.ok(stats.end > 4 * capacity, `produced ${stats.end} bytes`);
        assert.ok(stats.retained <= capacity);
        assert.ok(stats.allocated <= capacity);
        const r = await sup.read(id, 0, 1024, 0);
        assert.equal(r.output_lost, true);
        assert.ok(r.retained_from > 0);
        // Exactly what was missed: from the cursor asked for to the first byte of the chunk.
        assert.deepEqual(r.lost, { from: 0, to: r.cursor - Buffer.byteLength(r.chunk) });
        assert.ok((r.lost?.to ?? 0) >= r.retained_from);
        assert.match(r.chunk, /flood-line-of-text/);
        const s = await sup.terminate(id);
        assert.equal(s.termination, 'terminated');
        const growth = process.memoryUsage().rss - rssBefore;
        assert.ok(growth < 300 * 1024 * 1024, `RSS grew by ${growth} bytes`);
      });
    }
  });

  describe('occupancy', () => {
    it('an exclusive process makes the workspace busy; shared ones neither block nor wait', async () => {
      const sup = supervisor();
      const shared = await run(sup, ['sleep', '1000'], { occupancy: 'shared' });
      assert.equal(sup.occupant('ws'), undefined);
      const owner = await run(sup, ['sleep', '1000']);
      assert.deepEqual(sup.occupant('ws'), { process_id: owner, command: ['sleep', '1000'] });
      await assert.rejects(run(sup, ['true']), (e: unknown) => {
        assert.ok(ToolError.is(e, 'WORKSPACE_BUSY'));
        assert.deepEqual(e.details?.occupant, { process_id: owner, command: ['sleep', '1000'] });
        assert.match(e.hint ?? '', /terminate_process/);
        return true;
      });
      const shared2 = await run(sup, ['true'], { occupancy: 'shared' });
      const other = await run(sup, ['true'], { ws: workspace('other') });
      await readAll(sup, other);
      await sup.terminate(owner);
      assert.equal(sup.occupant('ws'), undefined);
      const next = await run(sup, ['true']);
      await readAll(sup, next);
      await sup.terminate(shared);
      await readAll(sup, shared2);
    });

    it('two concurrent exclusive execs: exactly one starts', async () => {
      const sup = supervisor();
      const results = await Promise.allSettled([run(sup, ['sleep', '1000']), run(sup, ['sleep', '1000'])]);
      assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
      const rejected = results.find((r) => r.status === 'rejected');
      assert.ok(rejected && ToolError.is(rejected.reason, 'WORKSPACE_BUSY'));
    });
  });

  describe('retention of exited processes', () => {
    it('forgets exited processes after the time bound', async () => {
      let now = 1_000_000;
      const clock: Clock = { now: () => now };
      const sup = supervisor({ clock, settings: { exitedTtlMs: 60_000 } });
      const id = await run(sup, ['true']);
      await waitExited(sup, id);
      now += 59_000;
      assert.equal(sup.status(id).state, 'exited');
      now += 2_000;
      assert.throws(() => sup.status(id), (e: unknown) => ToolError.is(e, 'PROCESS_NOT_FOUND'));
      await assert.rejects(sup.read(id, 0), (e: unknown) => ToolError.is(e, 'PROCESS_NOT_FOUND'));
    });

    it('keeps at most maxExited exited processes, dropping the oldest', async () => {
      const sup = supervisor({ settings: { maxExited: 2 } });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const id = await run(sup, ['true']);
        await waitExited(sup, id);
        await new Promise((r) => setTimeout(r, 5));
        ids.push(id);
      }
      assert.throws(() => sup.status(ids[0] as string), (e: unknown) => ToolError.is(e, 'PROCESS_NOT_FOUND'));
      assert.equal(sup.status(ids[1] as string).state, 'exited');
      assert.equal(sup.status(ids[2] as string).state, 'exited');
    });

    it('answers PROCESS_NOT_FOUND for an unknown id', async () => {
      const sup = supervisor();
      assert.throws(() => sup.status('p_0000000000000000'), (e: unknown) => ToolError.is(e, 'PROCESS_NOT_FOUND'));
      await assert.rejects(sup.terminate('nope'), (e: unknown) => ToolError.is(e, 'PROCESS_NOT_FOUND'));
    });
  });
});
