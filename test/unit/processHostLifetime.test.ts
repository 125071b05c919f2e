/**
 * A window's processes end when the window goes: the host ends them within the grace however the last client goes
 * (its socket closed, its process killed while something keeps the socket open, alive but hung, lingering without
 * its window and reconnecting), and every decision lands in the log that outlives the state folder.
 */
import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Logger } from '../../src/base/logger';
import type { ProcessBackend } from '../../src/features/processes/common/processBackend';
import { HostConnection } from '../../src/features/processes/node/processHost/client';
import { ProcessHost } from '../../src/features/processes/node/processHost/host';
import { HOST_LOG_NAME, appendBounded, hostLogFile, prepareHostLog } from '../../src/features/processes/node/processHost/hostLog';
import { FRAME_JSON, FrameReader, encodeMessage } from '../../src/features/processes/node/processHost/protocol';
import { identify } from '../../src/base/node/processIdentity';
import { ScriptedHandle } from './helpers/scriptedHandle';

const GRACE_MS = 2_000;

async function waitFor(what: string, check: () => boolean, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('process host: the window goes, its processes end within the grace', function () {
  this.timeout(60_000);
  let tmp: string;
  let socket: string;
  let logFile: string;
  let host: ProcessHost | undefined;
  let closedAt: number | undefined;
  let terminated: number;
  const raws: net.Socket[] = [];
  const children: number[] = [];

  class IdleHandle extends ScriptedHandle {
    override terminate(): Promise<void> {
      terminated++;
      this.events.fireExit({ signal: 'SIGTERM' });
      return Promise.resolve();
    }
  }

  beforeEach(async () => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ph-life-')));
    fs.mkdirSync(path.join(tmp, 's'), { mode: 0o700 });
    socket = path.join(tmp, 's', 'host.sock');
    logFile = prepareHostLog(hostLogFile(path.join(tmp, 'discovery')));
    closedAt = undefined;
    terminated = 0;
    // What main.ts does with the host's lines: the surviving log gets each of them.
    const line = (m: string | Error): void => appendBounded(logFile, `${new Date().toISOString()} [host ${process.pid}] ${String(m)}\n`);
    const logger: Logger = { trace: () => undefined, debug: () => undefined, info: line, warn: line, error: line };
    const backend = (kind: 'pty' | 'pipes'): ProcessBackend => ({ kind, available: () => true, spawn: (o) => Promise.resolve(new IdleHandle(o.tty)) });
    host = new ProcessHost({ socket, secret: 'first', graceMs: GRACE_MS, askWindowMs: 600, heartbeatMs: 300, editorPollMs: 100, logger, backends: { tty: backend('pty'), pipes: backend('pipes') }, onClosed: () => (closedAt = Date.now()) });
    await host.listen();
  });

  afterEach(async () => {
    for (const r of raws.splice(0)) r.destroy();
    for (const pid of children.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    await host?.close().catch(() => undefined);
    host = undefined;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const record = { process_id: 'p1', workspace_id: 'ws', command: ['x'], occupancy: 'shared' as const, started_at: Date.now(), capacity: 4096 };

  /** A real client with one process running. */
  async function attachedWithProcess(): Promise<HostConnection> {
    const c = await HostConnection.attach(socket, 'first', { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined });
    await c.spawn({ file: 'x', args: [], cwd: tmp, env: {}, tty: true }, { ...record, cwd: tmp }, undefined);
    return c;
  }

  /** A raw client: says hello (naming `extensionHost` when given) and then never answers anything. */
  async function rawAttach(extensionHost?: ReturnType<typeof identify>): Promise<net.Socket> {
    const raw = net.connect({ path: socket });
    raws.push(raw);
    raw.on('error', () => undefined);
    const reader = new FrameReader();
    let welcomed = false;
    raw.on('data', (c: Buffer) => {
      for (const f of reader.push(c)) if (f.kind === FRAME_JSON && f.message.t === 'welcome') welcomed = true;
    });
    raw.write(encodeMessage({ t: 'hello', secret: 'first', ...(extensionHost ? { extensionHost } : {}) }));
    await waitFor('the welcome', () => welcomed);
    const rec = { ...record, cwd: tmp };
    raw.write(encodeMessage({ t: 'spawn', req: 1, options: { file: 'x', args: [], cwd: tmp, env: {}, tty: true }, record: rec }));
    await waitFor('the process', () => (host?.size ?? 0) === 1);
    return raw;
  }

  const log = (): string => fs.readFileSync(logFile, 'utf8');

  it('the socket closes: the process ends after the grace, and the log says why', async () => {
    const c = await attachedWithProcess();
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    assert.equal(closedAt, undefined, 'a live window keeps the host past the first grace from start');
    const goneAt = Date.now();
    c.detach();
    await waitFor('the host to close', () => closedAt !== undefined);
    assert.equal(terminated, 1);
    assert.ok(Number(closedAt) - goneAt >= GRACE_MS - 100, 'not before the grace');
    assert.match(log(), /extension detached: 1 process\(es\) end in \d+ ms/);
    assert.match(log(), /no live window for \d+ ms .*ending 1 process\(es\) and exiting/);
  });

  it("the extension host's process is killed while its socket stays open: the host drops it and ends the process", async () => {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    children.push(child.pid as number);
    await waitFor('the stand-in extension host', () => identify(child.pid as number) !== undefined);
    const raw = await rawAttach(identify(child.pid as number));
    // It answers heartbeats as a live window would, until its process goes.
    raw.on('data', () => raw.write(encodeMessage({ t: 'window', live: true })));
    raw.write(encodeMessage({ t: 'window', live: true }));
    child.kill('SIGKILL');
    await waitFor('the host to close', () => closedAt !== undefined);
    assert.equal(terminated, 1);
    assert.match(log(), new RegExp(`the attached extension host \\(pid ${child.pid}\\) has exited: dropping its connection`));
    assert.ok(raw.destroyed || raw.readableEnded, 'its connection was dropped');
  });

  it('a client alive but hung (it never answers): the window counts as gone and the process ends within the grace', async () => {
    const raw = await rawAttach();
    const t0 = Date.now();
    await waitFor('the host to close', () => closedAt !== undefined);
    assert.ok(!raw.destroyed || closedAt !== undefined);
    assert.equal(terminated, 1);
    assert.ok(Number(closedAt) - t0 < GRACE_MS + 5_000);
    assert.match(log(), /did not answer within 600 ms whether it has its window/);
  });

  it('an extension host lingering without its window: reconnecting does not restart the grace', async () => {
    const c = await attachedWithProcess();
    c.windowAnswers = () => Promise.resolve(false);
    const lostAt = Date.now();
    c.windowLive(false);
    await waitFor('the loss to be logged', () => /lost its window/.test(log()));
    // It drops its connection and attaches again (it has the secret), still without a window, twice.
    let secret = c.nextSecret;
    c.detach();
    for (let i = 0; i < 2 && closedAt === undefined; i++) {
      await new Promise((resolve) => setTimeout(resolve, 400));
      const again = await HostConnection.attach(socket, secret, { trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined }).catch(() => undefined);
      if (!again) break;
      again.windowAnswers = () => Promise.resolve(false);
      secret = again.nextSecret;
      await new Promise((resolve) => setTimeout(resolve, 400));
      again.detach();
    }
    await waitFor('the host to close', () => closedAt !== undefined);
    assert.equal(terminated, 1);
    // Each reconnection would have given it a fresh grace before; now the grace runs from the first loss.
    assert.ok(Number(closedAt) - lostAt < GRACE_MS + 1_500, `closed ${Number(closedAt) - lostAt} ms after the window was lost`);
    assert.match(log(), /the grace already ran/);
  });

  it('the surviving log is private, bounded and rotated', () => {
    assert.equal(path.basename(logFile), HOST_LOG_NAME);
    assert.equal(path.basename(path.dirname(logFile)), 'discovery-logs');
    assert.equal(fs.statSync(path.dirname(logFile)).mode & 0o777, 0o700);
    const entry = `${'x'.repeat(99)}\n`;
    for (let i = 0; i < 30; i++) appendBounded(logFile, entry, 1_000);
    assert.ok(fs.statSync(logFile).size <= 1_000);
    assert.ok(fs.statSync(`${logFile}.1`).size <= 1_000);
    assert.equal(fs.statSync(logFile).mode & 0o777, 0o600);
    assert.deepEqual(fs.readdirSync(path.dirname(logFile)).sort(), [HOST_LOG_NAME, `${HOST_LOG_NAME}.1`]);
  });
});
