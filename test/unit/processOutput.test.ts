import * as assert from 'node:assert/strict';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Workspace } from '../../src/kernel/workspaces';
import type { ProcessRead, ProcessStatus } from '../../src/features/processes/common/supervisor';
import { ProcessSupervisor } from '../../src/features/processes/common/supervisor';
import { ChildProcessBackend } from '../../src/features/processes/node/childProcessBackend';
import { NodePtyBackend } from '../../src/features/processes/node/nodePtyBackend';

/**
 * The output collected for a command that has exited is complete: byte for byte, on a PTY (where node-pty
 * alone loses the tail of fast-exiting commands on Linux, microsoft/node-pty#85 and #726) and on pipes.
 */
const MIB = 1024 * 1024;
const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), LANG: 'C.UTF-8', TERM: 'xterm-256color' };

let tmp: string;
const supervisors: ProcessSupervisor[] = [];

function workspace(): Workspace {
  return { id: 'ws', name: 'ws', root: tmp, trusted: true, profile: 'exec', canWrite: true, canExec: true };
}

function supervisor(options: { ptyDrainMs?: number; pipesDrainMs?: number; retained?: number } = {}): ProcessSupervisor {
  const pty = new NodePtyBackend({ graceMs: 500, ...(options.ptyDrainMs !== undefined ? { drainMs: options.ptyDrainMs } : {}) });
  const pipes = new ChildProcessBackend({ graceMs: 500, ...(options.pipesDrainMs !== undefined ? { drainMs: options.pipesDrainMs } : {}) });
  const sup = new ProcessSupervisor({
    backends: { tty: () => pty, pipes: () => pipes },
    limits: () => ({ retainedOutputBytes: options.retained ?? 256 * 1024 }),
  });
  supervisors.push(sup);
  return sup;
}

async function start(sup: ProcessSupervisor, command: string[], tty: boolean): Promise<string> {
  const { process_id } = await sup.exec(workspace(), command, { cwd: tmp, root: tmp, tty, occupancy: 'shared', env });
  return process_id;
}

/** Every byte the supervisor collected for `id`, as it arrived. */
function collect(sup: ProcessSupervisor): (id: string) => Buffer {
  const chunks = new Map<string, Buffer[]>();
  sup.onDidOutput((id, bytes) => {
    const list = chunks.get(id) ?? [];
    list.push(Buffer.from(bytes));
    chunks.set(id, list);
  });
  return (id) => Buffer.concat(chunks.get(id) ?? []);
}

/** Reads like an agent, by cursor with wait_ms, until eof; returns the text and the last read. */
async function readToEof(sup: ProcessSupervisor, id: string): Promise<{ text: string; last: ProcessRead }> {
  let cursor = 0;
  let text = '';
  for (;;) {
    const r = await sup.read(id, cursor, 1024 * 1024, 2000);
    assert.equal(r.output_lost, false, 'the reader keeps up with the retained window');
    text += r.chunk;
    cursor = r.cursor;
    if (r.eof) return { text, last: r };
  }
}

function exitedOk(sup: ProcessSupervisor, id: string): ProcessStatus {
  const s = sup.status(id);
  assert.equal(s.state, 'exited');
  assert.equal(s.termination, 'exited');
  assert.equal(s.exit_code, 0);
  return s;
}

/** Text lines of a known pattern, so a lost or repeated piece shows. */
function pattern(bytes: number): Buffer {
  let s = '';
  for (let i = 0; s.length < bytes; i++) s += `line ${String(i).padStart(6, '0')} of the known pattern: abcdefghijklmnopqrstuvwxyz\n`;
  return Buffer.from(s.slice(0, bytes), 'latin1');
}

/** What a terminal with default settings (ONLCR) shows for `bytes` written by the program. */
function onTerminal(bytes: Buffer): Buffer {
  return Buffer.from(bytes.toString('latin1').replace(/\n/g, '\r\n'), 'latin1');
}

describe('process output is complete once the process has exited', function () {
  this.timeout(120_000);

  before(() => {
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-output-')));
    fs.writeFileSync(path.join(tmp, 'pattern.txt'), pattern(64 * 1024));
  });

  after(async () => {
    await Promise.all(supervisors.splice(0).map((s) => s.disposeAll()));
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  for (const tty of [true, false]) {
    it(`100 fast commands printing 1 B to 64 KiB arrive byte for byte (${tty ? 'pty' : 'pipes'})`, async () => {
      const sup = supervisor();
      const collected = collect(sup);
      const source = fs.readFileSync(path.join(tmp, 'pattern.txt'));
      // Sizes spread over the range, both ends included, plus the 4 KiB boundaries a PTY read stops at.
      const sizes = [1, 2, 4095, 4096, 4097, 65535, 65536];
      for (let i = sizes.length; i < 100; i++) sizes.push(1 + Math.floor(((i * 7919) % 100) * 655.36));
      const failures: string[] = [];
      for (const size of sizes) {
        const id = await start(sup, ['head', '-c', String(size), 'pattern.txt'], tty);
        const { text, last } = await readToEof(sup, id);
        const status = exitedOk(sup, id);
        const expected = tty ? onTerminal(source.subarray(0, size)) : source.subarray(0, size);
        const got = collected(id);
        if (!got.equals(expected)) failures.push(`${size} B: collected ${got.length} of ${expected.length} bytes`);
        else if (text !== expected.toString('latin1')) failures.push(`${size} B: read_process returned ${text.length} of ${expected.length} characters`);
        assert.equal(status.output_complete, true);
        assert.equal(last.output_complete, undefined);
      }
      assert.deepEqual(failures, [], `incomplete output for ${failures.length} of ${sizes.length} commands`);
    });
  }

  it('200 MiB on a PTY arrives complete, three times (length and hash)', async function () {
    this.timeout(180_000);
    const total = 200 * MIB;
    const expected = crypto.createHash('sha256');
    const block = Buffer.alloc(MIB, 'a');
    for (let i = 0; i < 200; i++) expected.update(block);
    const want = expected.digest('hex');
    const sup = supervisor({ retained: 4 * MIB });
    for (let run = 0; run < 3; run++) {
      const hash = crypto.createHash('sha256');
      let length = 0;
      let id = '';
      const early: Uint8Array[] = [];
      const sub = sup.onDidOutput((pid, bytes) => {
        if (id === '') early.push(Buffer.from(bytes));
        else if (pid === id) {
          hash.update(bytes);
          length += bytes.length;
        }
      });
      id = await start(sup, ['sh', '-c', `head -c ${total} /dev/zero | tr '\\0' a`], true);
      for (const bytes of early) {
        hash.update(bytes);
        length += bytes.length;
      }
      // The agent's view: read to eof, keeping only the tail.
      let cursor = 0;
      let tail = '';
      for (;;) {
        const r = await sup.read(id, cursor, 1024 * 1024, 2000);
        tail = (tail + r.chunk).slice(-16);
        cursor = r.cursor;
        if (r.eof) {
          assert.equal(r.output_complete, undefined);
          break;
        }
      }
      sub.dispose();
      const status = exitedOk(sup, id);
      assert.equal(status.output_complete, true);
      assert.equal(length, total, `run ${run + 1}: bytes collected`);
      assert.equal(hash.digest('hex'), want, `run ${run + 1}: content`);
      assert.equal(cursor, total, `run ${run + 1}: the final cursor`);
      assert.equal(tail, 'a'.repeat(16));
    }
  });

  it('says output_complete: false when a PTY drain cannot finish (output stopped with Ctrl-S)', async () => {
    const sup = supervisor({ ptyDrainMs: 300 });
    const id = await start(sup, ['sh', '-c', 'read line; exit 0'], true);
    // The line ends the read; Ctrl-S (XOFF) then stops the terminal's output, so nothing more comes out.
    await sup.write(id, 'go\n\x13');
    const { last } = await readToEof(sup, id);
    assert.equal(last.output_complete, false);
    const status = exitedOk(sup, id);
    assert.equal(status.output_complete, false);
  });

  it('says output_complete: false when a background job still holds the pipes at the drain bound', async () => {
    const sup = supervisor({ pipesDrainMs: 200 });
    const id = await start(sup, ['sh', '-c', 'sleep 30 & echo started'], false);
    const { text, last } = await readToEof(sup, id);
    assert.equal(text, 'started\n');
    assert.equal(last.output_complete, false);
    assert.equal(exitedOk(sup, id).output_complete, false);
  });
});
