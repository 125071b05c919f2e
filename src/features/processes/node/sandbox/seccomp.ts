/**
 * The seccomp filter that leaves sandboxed commands no Unix-socket channel out (`codespace.exec.unixSockets`).
 *
 * A read-only mount does not stop `connect()` on a Unix socket, and abstract sockets have no file at all, so hiding
 * folders cannot be the guarantee. This filter makes `socket(AF_UNIX, ...)` fail with EPERM for the command and
 * everything it starts (seccomp filters are inherited and cannot be removed): without a Unix socket of its own, a
 * command can connect to no path and no abstract name. `socketpair(AF_UNIX)` stays allowed: the pair is connected
 * only to itself, reaches nothing outside, and many programs need it (event loops, `subprocess`, dbus-free IPC).
 * io_uring is refused too, since IORING_OP_SOCKET creates sockets without the `socket` system call.
 *
 * The program is classic BPF (`struct sock_filter` array, host byte order), built here and handed to bubblewrap as
 * a file descriptor (`--seccomp FD`). It first checks the architecture of every system call: only the one it was
 * built for passes (x86_64, with the x32 ABI refused, or aarch64); any other (a 32-bit program's syscalls, whose
 * numbers differ) kills the process, since its socket calls could not be told apart.
 */

/** `struct seccomp_data` offsets: nr (u32), arch (u32), instruction_pointer (u64), args[6] (u64, little-endian). */
const OFFSET_NR = 0;
const OFFSET_ARCH = 4;
/** The low 32 bits of args[0] (both supported architectures are little-endian; the kernel reads `domain` as an int). */
const OFFSET_ARG0_LOW = 16;

const BPF_LD_W_ABS = 0x20;
const BPF_JMP_JEQ_K = 0x15;
const BPF_JMP_JGE_K = 0x35;
const BPF_RET_K = 0x06;

export const SECCOMP_RET_KILL_PROCESS = 0x80000000;
export const SECCOMP_RET_ERRNO = 0x00050000;
export const SECCOMP_RET_ALLOW = 0x7fff0000;
export const EPERM = 1;
export const AF_UNIX = 1;
/** x32 system calls are x86_64's with this bit set: refused (they would bypass the numbers checked below). */
export const X32_SYSCALL_BIT = 0x40000000;

export interface SeccompArch {
  /** `process.arch`. */
  readonly node: string;
  /** AUDIT_ARCH_* (linux/audit.h). */
  readonly audit: number;
  readonly socket: number;
  /** io_uring_setup, io_uring_enter, io_uring_register. */
  readonly ioUring: readonly number[];
  readonly x32: boolean;
}

/** The architectures the filter knows (system call numbers from the kernel's syscall tables). */
export const SECCOMP_ARCHES: readonly SeccompArch[] = [
  { node: 'x64', audit: 0xc000003e, socket: 41, ioUring: [425, 426, 427], x32: true },
  { node: 'arm64', audit: 0xc00000b7, socket: 198, ioUring: [425, 426, 427], x32: false },
];

/** Why the filter cannot be built for this machine (wrong OS, unknown architecture), or undefined. */
export function seccompUnavailable(platform: string = process.platform, arch: string = process.arch): string | undefined {
  if (platform !== 'linux') return 'seccomp filters exist only on Linux';
  if (!SECCOMP_ARCHES.some((a) => a.node === arch)) return `the Unix-socket filter knows no system call numbers for the ${arch} architecture (only x64 and arm64)`;
  return undefined;
}

interface Insn {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

const ld = (offset: number): Insn => ({ code: BPF_LD_W_ABS, jt: 0, jf: 0, k: offset });
const ret = (k: number): Insn => ({ code: BPF_RET_K, jt: 0, jf: 0, k });

/** The program as instructions (exported for tests that interpret it). */
export function unixSocketFilterProgram(arch: SeccompArch): Insn[] {
  const deny = SECCOMP_RET_ERRNO | EPERM;
  // The tail, addressed from the end: [ld arg0] [jeq AF_UNIX → deny] [allow] [deny].
  const tail: Insn[] = [ld(OFFSET_ARG0_LOW), { code: BPF_JMP_JEQ_K, jt: 1, jf: 0, k: AF_UNIX }, ret(SECCOMP_RET_ALLOW), ret(deny)];
  const checks: { code: number; k: number; to: 'deny' | 'socket' }[] = [
    ...(arch.x32 ? [{ code: BPF_JMP_JGE_K, k: X32_SYSCALL_BIT, to: 'deny' as const }] : []),
    ...arch.ioUring.map((k) => ({ code: BPF_JMP_JEQ_K, k, to: 'deny' as const })),
    { code: BPF_JMP_JEQ_K, k: arch.socket, to: 'socket' },
  ];
  const head: Insn[] = [ld(OFFSET_ARCH), { code: BPF_JMP_JEQ_K, jt: 1, jf: 0, k: arch.audit }, ret(SECCOMP_RET_KILL_PROCESS), ld(OFFSET_NR)];
  const body: Insn[] = checks.map((c, i) => {
    // Instructions after this one before the tail: the remaining checks, then "allow" (the fall-through).
    const rest = checks.length - 1 - i + 1;
    const target = c.to === 'socket' ? rest : rest + tail.length - 1;
    return { code: c.code, jt: target, jf: 0, k: c.k };
  });
  return [...head, ...body, ret(SECCOMP_RET_ALLOW), ...tail];
}

/** The filter for `arch` (default: this process's) as bubblewrap reads it from `--seccomp FD`. */
export function unixSocketFilter(archName: string = process.arch): Buffer {
  const arch = SECCOMP_ARCHES.find((a) => a.node === archName);
  if (!arch) throw new Error(seccompUnavailable('linux', archName));
  const program = unixSocketFilterProgram(arch);
  const buf = Buffer.alloc(program.length * 8);
  program.forEach((insn, i) => {
    if (insn.jt > 255 || insn.jf > 255) throw new Error('seccomp program: a jump is too long');
    buf.writeUInt16LE(insn.code, i * 8);
    buf.writeUInt8(insn.jt, i * 8 + 2);
    buf.writeUInt8(insn.jf, i * 8 + 3);
    buf.writeUInt32LE(insn.k >>> 0, i * 8 + 4);
  });
  return buf;
}

/** `codespace.exec.unixSockets`: `block` (the filter, fail closed) or `allow` (the documented weaker mode: no filter). */
export type UnixSocketMode = 'block' | 'allow';

/** The descriptor the launcher opens the filter on, for bubblewrap's `--seccomp` (3 to 5 are the launcher's own). */
export const SECCOMP_FD = 6;

/**
 * Where the filter goes on the launch. Without the `domains` relay: on the sandbox's bubblewrap itself. With it, the
 * relay (which connects to the proxy's Unix socket for every request) must run unfiltered, so the sandbox starts
 * unfiltered, the relay starts, and then a second, nested bubblewrap applies the filter to the command alone; it
 * only adds a user and mount namespace over the same tree (`--bind / /`), so the command sees what it saw before,
 * and drops every capability (the outer one keeps them then, see SandboxPlan.nestedFilter).
 */
export function seccompLaunch(bwrap: string, relay: boolean): { outer: string[]; inner: string[] } {
  const flag = ['--seccomp', String(SECCOMP_FD)];
  if (!relay) return { outer: flag, inner: [] };
  return { outer: [], inner: [bwrap, '--unshare-user', '--cap-drop', 'ALL', ...flag, '--die-with-parent', '--bind', '/', '/', '--'] };
}
