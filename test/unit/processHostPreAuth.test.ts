import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { silentLogger } from '../../src/base/logger';
import type { ProcessBackend } from '../../src/features/processes/common/processBackend';
import { HostConnection } from '../../src/features/processes/node/processHost/client';
import { ProcessHost } from '../../src/features/processes/node/processHost/host';
import { FRAME_JSON, FrameReader, MAX_FRAME, MAX_HELLO_FRAME, encodeMessage } from '../../src/features/processes/node/processHost/protocol';
import { ScriptedHandle } from './helpers/scriptedHandle';

async function waitFor(what: string, check: () => boolean, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (Date.now() < end) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A frame header: a 4-byte length and a kind byte. */
function header(length: number, kind = FRAME_JSON): Buffer {
  const b = Buffer.alloc(5);
  b.writeUInt32BE(length, 0);
  b.writeUInt8(kind, 4);
  return b;
}

describe('process host: frames before and after the secret (FrameReader)', () => {
  it('refuses a frame longer than its limit as soon as the length has arrived, split or whole, and keeps nothing of it', () => {
    for (const length of [300 * 1024 * 1024, MAX_HELLO_FRAME + 1, 2048]) {
      const whole = new FrameReader(MAX_HELLO_FRAME);
      assert.throws(() => whole.push(header(length)), /bad frame length/);
      const split = new FrameReader(MAX_HELLO_FRAME);
      const h = header(length);
      assert.deepEqual(split.push(h.subarray(0, 1)), []);
      assert.deepEqual(split.push(h.subarray(1, 3)), []);
      assert.throws(() => split.push(h.subarray(3)), /bad frame length/);
    }
    // At the limit a frame passes; the default limit is the post-secret one.
    const hello = encodeMessage({ t: 'hello', secret: 'x'.repeat(MAX_HELLO_FRAME - 40) });
    assert.ok(hello.length - 4 <= MAX_HELLO_FRAME, 'the test hello is within the limit');
    assert.equal(new FrameReader(MAX_HELLO_FRAME).push(hello).length, 1);
    assert.equal(new FrameReader().limit, MAX_FRAME);
  });

  it('a real hello (a 64-character secret and the editor identity) is far under the pre-secret limit', () => {
    const editor = { pid: 4_194_304, start: '18446744073709551615', boot: '8f3c2d6e-6d0a-4b9e-9c61-3f1e2a7b5c40' };
    const hello = encodeMessage({ t: 'hello', secret: 'f'.repeat(64), editor });
    assert.ok(hello.length < MAX_HELLO_FRAME / 4, `hello is ${hello.length} bytes`);
  });

  it('joins the pieces of a frame once, not on every read (no quadratic copying)', () => {
    const body = Buffer.from(JSON.stringify({ t: 'write', id: 'p', data: 'a'.repeat(4 * 1024 * 1024) }), 'utf8');
    const frame = Buffer.concat([header(body.length + 1), body]);
    const reader = new FrameReader();
    const concat = Buffer.concat;
    let joins = 0;
    let joinedBytes = 0;
    Buffer.concat = ((list: readonly Uint8Array[], total?: number) => {
      joins++;
      const out = concat(list, total);
      joinedBytes += out.length;
      return out;
    }) as typeof Buffer.concat;
    let frames = 0;
    try {
      for (let at = 0; at < frame.length; at += 4096) frames += reader.push(frame.subarray(at, at + 4096)).length;
    } finally {
      Buffer.concat = concat;
    }
    assert.equal(frames, 1);
    assert.ok(joins <= 1, `${joins} joins for ${Math.ceil(frame.length / 4096)} reads`);
    assert.ok(joinedBytes <= frame.length, `${joinedBytes} bytes copied for a ${frame.length}-byte frame`);
    assert.equal(reader.buffered, 0);
  });

  it('counts what it holds, and keeps a partial frame after whole ones', () => {
    const reader = new FrameReader();
    const a = encodeMessage({ t: 'done', req: 1 });
    const b = encodeMessage({ t: 'done', req: 2 });
    const frames = reader.push(Buffer.concat([a, b.subarray(0, 3)]));
    assert.equal(frames.length, 1);
    assert.equal(reader.buffered, 3);
    assert.deepEqual(
      reader.push(b.subarray(3)).map((f) => (f.kind === FRAME_JSON ? f.message : undefined)),
      [{ t: 'done', req: 2 }],
    );
    assert.equal(reader.buffered, 0);
  });
});

describe('process host: a connection that has not proved the secret', function () {
  this.timeout(60_000);
  const HELLO_MS = 1_000;
  let tmp: string;
  let socket: string;
  let host: ProcessHost;
  const raws: net.Socket[] = [];
  const opened: HostConnection[] = [];
  /** The most bytes the host's readers held at any sample while a test ran. */
  let peak = 0;
  let sampler: ReturnType<typeof setInterval>;

  beforeEach(async () => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'ph-preauth-')));
    const dir = path.join(tmp, 's');
    fs.mkdirSync(dir, { mode: 0o700 });
    socket = path.join(dir, 'host.sock');
    const backend = (kind: 'pty' | 'pipes'): ProcessBackend => ({ kind, available: () => true, spawn: (o) => Promise.resolve(new ScriptedHandle(o.tty)) });
    host = new ProcessHost({ socket, secret: 'first', graceMs: 60_000, helloMs: HELLO_MS, logger: silentLogger, backends: { tty: backend('pty'), pipes: backend('pipes') } });
    await host.listen();
    peak = 0;
    sampler = setInterval(() => (peak = Math.max(peak, host.bufferedBytes)), 5);
  });

  afterEach(async () => {
    clearInterval(sampler);
    for (const c of opened.splice(0)) c.detach();
    for (const r of raws.splice(0)) r.destroy();
    await host.close().catch(() => undefined);
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  /**
   * Connects, runs `send` on the socket, and resolves once the host closed the connection: with how many bytes the
   * client managed to write by then and whether the client was still sending.
   */
  function hostile(send: (s: net.Socket, stillOpen: () => boolean) => void): Promise<{ written: number }> {
    return new Promise((resolve) => {
      const s = net.connect(socket, () => send(s, () => !s.destroyed && s.writable));
      raws.push(s);
      s.on('error', () => undefined);
      s.on('close', () => resolve({ written: s.bytesWritten }));
    });
  }

  /** Writes `piece` as fast as the socket takes it until the host closes it or `total` bytes are out. */
  function flood(s: net.Socket, stillOpen: () => boolean, piece: Buffer, total: number): void {
    let sent = 0;
    const more = (): void => {
      while (stillOpen() && sent < total) {
        sent += piece.length;
        if (!s.write(piece)) return void s.once('drain', more);
      }
    };
    more();
  }

  async function stillServes(): Promise<void> {
    const c = await HostConnection.attach(socket, 'first', silentLogger);
    opened.push(c);
    const record = { process_id: 'p1', workspace_id: 'ws', command: ['x'], cwd: tmp, occupancy: 'shared' as const, started_at: Date.now(), capacity: 4096 };
    const handle = await c.spawn({ file: 'x', args: [], cwd: tmp, env: {}, tty: true }, record, undefined);
    // After the secret the ordinary limit applies: a write far larger than a hello goes through, and the connection
    // still answers the request after it.
    handle.write('y'.repeat(2 * 1024 * 1024));
    await handle.terminate();
    assert.ok(c.open, 'the client keeps its connection');
  }

  it('a 300 MiB (or a 200 MiB, within the post-secret limit) frame header and a flood are closed at once; the host holds no more than a hello', async () => {
    for (const length of [300 * 1024 * 1024, 200 * 1024 * 1024]) {
      const r = await hostile((s, open) => {
        s.write(header(length));
        flood(s, open, Buffer.alloc(64 * 1024, 0x61), length);
      });
      assert.ok(r.written < length, `the client wrote ${r.written} bytes before the host closed it`);
      assert.ok(peak <= MAX_HELLO_FRAME, `the host held ${peak} bytes`);
    }
    await stillServes();
  });

  it('a 2 KiB hello is refused before it is kept', async () => {
    await hostile((s) => s.write(encodeMessage({ t: 'hello', secret: 'z'.repeat(2048) })));
    assert.ok(peak <= MAX_HELLO_FRAME, `the host held ${peak} bytes`);
    await stillServes();
  });

  it('garbage is closed: bad kinds, bad JSON, JSON that is no message, a data frame first', async () => {
    const garbage = [
      Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'),
      Buffer.from([0, 0, 0, 9, 7, 1, 2, 3, 4, 5, 6, 7, 8]),
      Buffer.concat([header(4), Buffer.from('{x}')]),
      Buffer.concat([header(3), Buffer.from('[]')]),
      Buffer.from([0, 0, 0, 5, 2, 1, 0x70, 0x61, 0x62]),
      Buffer.from([0, 0, 0, 0]),
    ];
    for (const g of garbage) await hostile((s) => s.write(g));
    assert.ok(peak <= MAX_HELLO_FRAME, `the host held ${peak} bytes`);
    await stillServes();
  });

  it('a slow trickle of a hello, and a connection that sends nothing, are closed at the hello deadline', async () => {
    const t0 = Date.now();
    const trickle = hostile((s, open) => {
      const frame = encodeMessage({ t: 'hello', secret: 'first' });
      let at = 0;
      const tick = setInterval(() => {
        if (!open() || at >= frame.length - 1) return clearInterval(tick);
        s.write(frame.subarray(at, ++at));
      }, 200);
    });
    const silent = hostile(() => undefined);
    await Promise.all([trickle, silent]);
    assert.ok(Date.now() - t0 >= HELLO_MS - 50, 'not before the deadline');
    assert.ok(peak <= MAX_HELLO_FRAME);
    await stillServes();
  });

  it('a wrong secret is answered once; a second hello on the same connection closes it', async () => {
    const answers: string[] = [];
    await hostile((s) => {
      const reader = new FrameReader();
      s.on('data', (c: Buffer) => {
        for (const f of reader.push(c)) if (f.kind === FRAME_JSON) answers.push(f.message.t);
      });
      s.write(encodeMessage({ t: 'hello', secret: 'wrong' }));
      setTimeout(() => s.writable && s.write(encodeMessage({ t: 'hello', secret: 'first' })), 100);
    });
    assert.deepEqual(answers, ['denied']);
    await stillServes();
  });

  it('many hostile connections at once leave the host small and an attached client unaffected', async () => {
    const c = await HostConnection.attach(socket, 'first', silentLogger);
    opened.push(c);
    const attacks = Array.from({ length: 8 }, (_, i) =>
      hostile((s, open) => {
        if (i % 2 === 0) s.write(header(200 * 1024 * 1024));
        flood(s, open, Buffer.alloc(16 * 1024, 0x62), 64 * 1024 * 1024);
      }),
    );
    const record = { process_id: 'p2', workspace_id: 'ws', command: ['x'], cwd: tmp, occupancy: 'shared' as const, started_at: Date.now(), capacity: 4096 };
    await c.spawn({ file: 'x', args: [], cwd: tmp, env: {}, tty: false }, record, undefined);
    await Promise.all(attacks);
    assert.ok(c.open, 'the attached client keeps its connection');
    assert.ok(peak <= 8 * MAX_HELLO_FRAME, `the host held ${peak} bytes`);
    await waitFor('the readers to be released', () => host.bufferedBytes === 0);
  });
});
