import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  AF_UNIX,
  EPERM,
  SECCOMP_ARCHES,
  SECCOMP_FD,
  SECCOMP_RET_ALLOW,
  SECCOMP_RET_ERRNO,
  SECCOMP_RET_KILL_PROCESS,
  X32_SYSCALL_BIT,
  seccompLaunch,
  seccompUnavailable,
  unixSocketFilter,
} from '../../src/features/processes/node/sandbox/seccomp';
import { mergeHidden, runtimeSocketEntries } from '../../src/features/processes/node/sandbox/runtimeSockets';
import { SandboxPlanError, bubblewrapArgs } from '../../src/features/processes/node/sandbox/bubblewrapArgs';

/** A classic-BPF interpreter for the instructions a seccomp filter may use here, run on the encoded bytes. */
function runFilter(program: Buffer, data: { nr: number; arch: number; args?: bigint[] }): number {
  const mem = Buffer.alloc(64);
  mem.writeUInt32LE(data.nr >>> 0, 0);
  mem.writeUInt32LE(data.arch >>> 0, 4);
  (data.args ?? []).forEach((a, i) => mem.writeBigUInt64LE(a, 16 + i * 8));
  let acc = 0;
  let pc = 0;
  for (let steps = 0; steps < 1000; steps++) {
    assert.ok(pc >= 0 && pc * 8 < program.length, `the program runs off its end at ${pc}`);
    const code = program.readUInt16LE(pc * 8);
    const jt = program.readUInt8(pc * 8 + 2);
    const jf = program.readUInt8(pc * 8 + 3);
    const k = program.readUInt32LE(pc * 8 + 4);
    switch (code) {
      case 0x20: // ld [k]
        assert.ok(k % 4 === 0 && k < 64, `load from offset ${k}`);
        acc = mem.readUInt32LE(k);
        pc++;
        break;
      case 0x15: // jeq #k
        pc += 1 + (acc === k ? jt : jf);
        break;
      case 0x35: // jge #k
        pc += 1 + (acc >= k ? jt : jf);
        break;
      case 0x06: // ret #k
        return k;
      default:
        throw new Error(`unexpected BPF opcode 0x${code.toString(16)} at ${pc}`);
    }
  }
  throw new Error('the program loops');
}

const DENY = (SECCOMP_RET_ERRNO | EPERM) >>> 0;
const AF_INET = 2;
const AF_INET6 = 10;
const AF_NETLINK = 16;
const SOCKETPAIR: Record<string, number> = { x64: 53, arm64: 199 };
const CONNECT: Record<string, number> = { x64: 42, arm64: 203 };

describe('Unix-socket seccomp filter (pure)', () => {
  for (const arch of SECCOMP_ARCHES) {
    describe(arch.node, () => {
      const program = unixSocketFilter(arch.node);
      const run = (nr: number, args: bigint[] = [], auditArch = arch.audit): number => runFilter(program, { nr, arch: auditArch, args });

      it('is a whole number of 8-byte instructions, at most the kernel limit, every path ending in a return', () => {
        assert.equal(program.length % 8, 0);
        assert.ok(program.length / 8 <= 4096);
        assert.equal(program.readUInt16LE(program.length - 8), 0x06);
      });

      it('socket(AF_UNIX) fails with EPERM, whatever the type and the upper half of the argument', () => {
        assert.equal(run(arch.socket, [BigInt(AF_UNIX), 1n, 0n]), DENY);
        assert.equal(run(arch.socket, [BigInt(AF_UNIX), 2n | 0x80000n, 0n]), DENY);
        assert.equal(run(arch.socket, [(0xffffffffn << 32n) | BigInt(AF_UNIX), 5n]), DENY, 'the kernel reads the domain as an int');
      });

      it('other socket families, socketpair, connect and ordinary calls are allowed', () => {
        for (const family of [AF_INET, AF_INET6, AF_NETLINK, 0]) assert.equal(run(arch.socket, [BigInt(family), 1n]), SECCOMP_RET_ALLOW, `family ${family}`);
        assert.equal(run(SOCKETPAIR[arch.node] as number, [BigInt(AF_UNIX), 1n]), SECCOMP_RET_ALLOW);
        assert.equal(run(CONNECT[arch.node] as number, [3n]), SECCOMP_RET_ALLOW);
        for (const nr of [0, 1, 2, 59, 63, 64, 221, 424, 428]) assert.equal(run(nr, [BigInt(AF_UNIX)]), SECCOMP_RET_ALLOW, `syscall ${nr}`);
      });

      it('io_uring (which opens sockets without socket()) fails with EPERM', () => {
        for (const nr of arch.ioUring) assert.equal(run(nr), DENY);
      });

      it('kills a system call of any other architecture (its numbers would not mean the same)', () => {
        for (const other of [0x40000003 /* i386 */, 0x40000028 /* arm */, ...SECCOMP_ARCHES.filter((a) => a !== arch).map((a) => a.audit)]) {
          assert.equal(run(arch.socket, [BigInt(AF_UNIX)], other), SECCOMP_RET_KILL_PROCESS);
          assert.equal(run(0, [], other), SECCOMP_RET_KILL_PROCESS);
        }
      });

      if (arch.x32) {
        it('x32 system calls (the same architecture, numbers with bit 30) fail with EPERM', () => {
          assert.equal(run(arch.socket | X32_SYSCALL_BIT, [BigInt(AF_UNIX)]), DENY);
          assert.equal(run(0 | X32_SYSCALL_BIT), DENY);
        });
      }
    });
  }

  it('refuses, naming why, an architecture or a system it has no numbers for', () => {
    assert.equal(seccompUnavailable('linux', 'x64'), undefined);
    assert.equal(seccompUnavailable('linux', 'arm64'), undefined);
    assert.match(seccompUnavailable('linux', 'ia32') ?? '', /no system call numbers for the ia32 architecture/);
    assert.match(seccompUnavailable('linux', 'riscv64') ?? '', /riscv64/);
    assert.match(seccompUnavailable('darwin', 'arm64') ?? '', /only on Linux/);
    assert.throws(() => unixSocketFilter('ppc64'), /ppc64/);
  });

  it('is applied by the sandbox bwrap itself, or (with the domains relay) by a nested bwrap after the relay', () => {
    assert.deepEqual(seccompLaunch('/usr/bin/bwrap', false), { outer: ['--seccomp', String(SECCOMP_FD)], inner: [] });
    const nested = seccompLaunch('/usr/bin/bwrap', true);
    assert.deepEqual(nested.outer, []);
    assert.equal(nested.inner[0], '/usr/bin/bwrap');
    assert.deepEqual(nested.inner.slice(nested.inner.indexOf('--seccomp'), nested.inner.indexOf('--seccomp') + 2), ['--seccomp', String(SECCOMP_FD)]);
    assert.equal(nested.inner.at(-1), '--');
  });

  it('the sandbox bwrap keeps capabilities only for the domains relay stage under the nested filter, which drops them', () => {
    const bridge = { socket: '/run/x/proxy.sock', relayScript: '/opt/ext/dist/netRelay.js', node: '/usr/bin/node', mkfifo: '/usr/bin/mkfifo' };
    const plan = { root: '/w/proj', cwd: '/w/proj', tty: false, protect: [], hide: [], emptyFile: '/run/cs/empty' };
    const capDrop = (args: string[]): boolean => args.some((a, i) => a === '--cap-drop' && args[i + 1] === 'ALL');
    assert.ok(capDrop(bubblewrapArgs({ ...plan, network: 'block' })));
    assert.ok(capDrop(bubblewrapArgs({ ...plan, network: 'domains', netBridge: bridge })));
    assert.ok(!capDrop(bubblewrapArgs({ ...plan, network: 'domains', netBridge: bridge, nestedFilter: true })));
    assert.ok(capDrop(seccompLaunch('/usr/bin/bwrap', true).inner));
    for (const network of ['block', 'allow'] as const) assert.throws(() => bubblewrapArgs({ ...plan, network, nestedFilter: true }), SandboxPlanError);
  });
});

describe('runtime sockets hidden by the file system (pure)', () => {
  let tmp: string;
  beforeEach(() => {
    // Not under /tmp: the sandbox's /tmp is private already, so nothing there is listed.
    const base = fs.existsSync('/var/tmp') ? '/var/tmp' : os.homedir();
    tmp = fs.realpathSync(fs.mkdtempSync(path.join(base, 'codespace-rt-')));
  });
  afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

  const socketAt = async (p: string): Promise<() => Promise<void>> => {
    const net = await import('node:net');
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(p, resolve));
    return () => new Promise<void>((resolve) => server.close(() => resolve()));
  };

  it('a private runtime folder (0700, this user) is hidden whole, wherever $XDG_RUNTIME_DIR puts it', () => {
    const rt = path.join(tmp, 'runtime');
    fs.mkdirSync(rt, { mode: 0o700 });
    assert.deepEqual(runtimeSocketEntries({ XDG_RUNTIME_DIR: rt }, {}), [{ path: rt, kind: 'dir' }]);
    assert.deepEqual(runtimeSocketEntries({}, { XDG_RUNTIME_DIR: `${rt}/` }), [{ path: rt, kind: 'dir' }], "the extension host's too");
  });

  it('a shared folder is never hidden whole: only the sockets in it at launch; VS Code IPC hooks by name', async () => {
    const shared = path.join(tmp, 'shared');
    fs.mkdirSync(shared, { mode: 0o755 });
    fs.chmodSync(shared, 0o755);
    fs.writeFileSync(path.join(shared, 'plain.txt'), 'x');
    const closeA = await socketAt(path.join(shared, 'vscode-ipc-1.sock'));
    const closeB = await socketAt(path.join(shared, 'vscode-git-2.sock'));
    try {
      const entries = runtimeSocketEntries({ TMPDIR: shared }, { VSCODE_IPC_HOOK_CLI: path.join(shared, 'vscode-ipc-1.sock') });
      assert.deepEqual(entries.map((e) => e.path).sort(), [path.join(shared, 'vscode-git-2.sock'), path.join(shared, 'vscode-ipc-1.sock')]);
      assert.ok(entries.every((e) => e.kind === 'file'));
    } finally {
      await closeA();
      await closeB();
    }
  });

  it('never lists /, /tmp or anything under it, nor relative or missing paths', () => {
    assert.deepEqual(runtimeSocketEntries({ XDG_RUNTIME_DIR: '/', TMPDIR: '/tmp', VSCODE_IPC_HOOK_CLI: 'rel/x.sock' }, { XDG_RUNTIME_DIR: path.join(tmp, 'missing') }), []);
  });

  it('merging drops entries inside a hidden folder and keeps one entry per path', () => {
    const merged = mergeHidden(
      [{ path: '/run/user/1000', kind: 'dir' }, { path: '/home/u/.ssh', kind: 'dir' }],
      [{ path: '/run/user/1000/bus', kind: 'file' }, { path: '/run/user/1000', kind: 'dir' }, { path: '/srv/x.sock', kind: 'file' }],
    );
    assert.deepEqual(merged, [{ path: '/run/user/1000', kind: 'dir' }, { path: '/home/u/.ssh', kind: 'dir' }, { path: '/srv/x.sock', kind: 'file' }]);
  });
});
