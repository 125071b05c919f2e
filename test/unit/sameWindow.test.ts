import * as assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { WindowAnswer } from '../../src/features/connect/common/liveness';
import { WindowLiveness } from '../../src/features/connect/common/liveness';
import type { DiscoveryRecord } from '../../src/features/connect/common/record';
import { endpointUrlFor } from '../../src/features/connect/common/record';
import { silentLogger } from '../../src/base/logger';
import { DiscoveryEntry, readRecords } from '../../src/features/connect/node/discoveryFiles';
import { PingAnswerer, askSameWindows } from '../../src/features/connect/node/sameWindow';

async function waitFor(what: string, check: () => boolean, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('window liveness: a question to the window that stays unanswered', () => {
  const open: WindowLiveness[] = [];
  afterEach(() => {
    for (const l of open.splice(0)) l.dispose();
  });

  it('an answer keeps it live; no answer within the deadline makes it lost; the late answer makes it live again', async () => {
    let answer: (() => void) | undefined;
    let answering = true;
    const liveness = new WindowLiveness({
      roundTrip: () => (answering ? Promise.resolve() : new Promise<void>((resolve) => (answer = resolve))),
      intervalMs: 3_600_000,
      timeoutMs: 3_600_000,
    });
    open.push(liveness);
    const seen: WindowAnswer[] = [];
    liveness.onDidChange((s) => seen.push(s));
    assert.equal(await liveness.check(10_000), 'live');
    answering = false;
    assert.equal(await liveness.check(50), 'lost');
    assert.equal(liveness.current, 'lost');
    // Asking again does not pile up questions: the one in flight is still the one that counts.
    assert.equal(await liveness.check(50), 'lost');
    answer?.();
    await waitFor('the late answer', () => liveness.current === 'live');
    assert.deepEqual(seen, ['lost', 'live']);
  });

  it("the process host's regular question (settle false) only reports a late answer: the state stays live", async () => {
    let answering = true;
    const liveness = new WindowLiveness({ roundTrip: () => (answering ? Promise.resolve() : new Promise<void>(() => undefined)), intervalMs: 3_600_000, timeoutMs: 3_600_000 });
    open.push(liveness);
    const seen: WindowAnswer[] = [];
    liveness.onDidChange((s) => seen.push(s));
    assert.equal(await liveness.check(10_000, false), 'live');
    answering = false;
    assert.equal(await liveness.check(50, false), 'lost');
    assert.equal(liveness.current, 'live');
    assert.deepEqual(seen, []);
    // The same question asked to settle (a bridge's ping, a takeover) makes it lost.
    assert.equal(await liveness.check(50), 'lost');
    assert.equal(liveness.current, 'lost');
  });

  it('a window that answers with an error is there', async () => {
    const liveness = new WindowLiveness({ roundTrip: () => Promise.reject(new Error('no such command')), intervalMs: 3_600_000, timeoutMs: 3_600_000 });
    open.push(liveness);
    assert.equal(await liveness.check(10_000), 'live');
  });

  it('asked on its own: a question open longer than the timeout makes it lost', async () => {
    const liveness = new WindowLiveness({ roundTrip: () => new Promise<void>(() => undefined), intervalMs: 10, timeoutMs: 30 });
    open.push(liveness);
    await waitFor('lost', () => liveness.current === 'lost');
  });
});

describe('same folders on start: a reloaded window\'s lingering extension host, or a second window', function () {
  this.timeout(60_000);
  let tmp: string;
  let dir: string;
  const children: ChildProcess[] = [];
  const answerers: PingAnswerer[] = [];
  const folders = ['/projects/a', '/projects/b'];

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'same-window-'));
    dir = path.join(tmp, 'codespace');
    fs.mkdirSync(dir, { mode: 0o700 });
  });

  afterEach(() => {
    for (const a of answerers.splice(0)) a.dispose();
    for (const c of children.splice(0)) c.kill('SIGKILL');
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /** A real process standing for another extension host, with its record published in the folder. */
  function otherHost(recordFolders: string[] = folders): { entry: DiscoveryEntry; pid: number } {
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60000)'], { stdio: 'ignore' });
    children.push(child);
    const pid = child.pid as number;
    const entry = DiscoveryEntry.create(dir, pid);
    const record: DiscoveryRecord = { version: 1, pid, port: 40000 + children.length, url: endpointUrlFor(40000 + children.length), protocol: 'mcp-streamable-http', workspaceFolders: recordFolders, createdAt: new Date().toISOString(), serverVersion: 'test' };
    entry.write(record, 'token');
    return { entry, pid };
  }

  it('a second window whose window answers says so, and its record stays', async () => {
    const { entry, pid } = otherHost();
    answerers.push(new PingAnswerer({ dir, recordFile: () => entry.recordFile, windowAnswers: () => Promise.resolve(true), logger: silentLogger }));
    const outcomes = await askSameWindows({ dir, folders, selfPid: process.pid, timeoutMs: 20_000 });
    assert.deepEqual(outcomes, [{ pid, answer: 'live' }]);
    assert.equal(readRecords(dir).length, 1);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.endsWith('.ping') || n.endsWith('.pong')), [], 'no ping or pong left behind');
  });

  it('the window\'s own previous extension host, whose window does not answer, withdraws; the asker sees it go', async () => {
    const { entry, pid } = otherHost();
    // What the extension does when its window does not answer: it stops its endpoint, and so its record goes.
    answerers.push(new PingAnswerer({ dir, recordFile: () => entry.recordFile, windowAnswers: () => Promise.resolve(false).finally(() => entry.remove()), logger: silentLogger }));
    const outcomes = await askSameWindows({ dir, folders, selfPid: process.pid, timeoutMs: 20_000 });
    assert.deepEqual(outcomes, [{ pid, answer: 'gone' }]);
    assert.equal(readRecords(dir).length, 0);
  });

  it('an owner that never answers is waited for only until the deadline; other folders and this process are not asked', async () => {
    const { pid } = otherHost();
    otherHost(['/projects/a']);
    const outcomes = await askSameWindows({ dir, folders, selfPid: process.pid, timeoutMs: 300 });
    assert.deepEqual(outcomes, [{ pid, answer: 'silent' }]);
    assert.deepEqual(await askSameWindows({ dir, folders, selfPid: pid, timeoutMs: 300 }), []);
  });

  it('an owner that ended is not asked (its stale record is cleared)', async () => {
    otherHost();
    const child = children[0] as ChildProcess;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
    assert.deepEqual(await askSameWindows({ dir, folders, selfPid: process.pid, timeoutMs: 300 }), []);
    assert.deepEqual(fs.readdirSync(dir), []);
  });
});
