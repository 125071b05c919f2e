import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CommandIsolation, IsolationStatus, NewRepositoryExposure } from '../../common/commandIsolation';
import type { Logger } from '../../../../base/logger';
import { SpawnError } from '../../common/processBackend';
import type { SpawnOptions } from '../../common/processBackend';
import { SandboxPlanError, bubblewrapArgs } from './bubblewrapArgs';
import { holdPlaceholders } from './placeholders';
import type { GitWrites, NestedRepository } from './sandboxInventory';
import { hiddenEntries } from './sandboxInventory';
import type { IncompleteProtection } from './protectionCheck';
import { currentProtected, describeProtection, planProtection, requireComplete } from './protectionCheck';
import type { NetBridge } from './netBridge';
import { relayLauncher } from './netBridge';
import type { TestHosts } from './networkProxy';
import { NetworkProxy } from './networkProxy';
import { parseAllowList } from '../../common/networkDomains';
import type { OwnTempDir } from '../../../../base/node/ownTempDir';
import { ownTempDir } from '../../../../base/node/ownTempDir';
import type { UnixSocketMode } from './seccomp';
import { mergeHidden, runtimeSocketEntries } from './runtimeSockets';
import { SECCOMP_FD, seccompLaunch, seccompUnavailable, unixSocketFilter } from './seccomp';
import { describeError } from '../../../../base/describeError';
import { explainProbeFailure, firstExisting, run } from './probeRun';

export { explainProbeFailure } from './probeRun';

export type IsolationMode = 'auto' | 'required' | 'off';
/** `domains`: no network but the network proxy, which admits the allowed domains only (networkProxy.ts). */
export type NetworkMode = 'block' | 'allow' | 'domains';

export interface IsolationSettings {
  /** `codespace.exec.isolation`, read fresh for every command. */
  readonly mode: () => IsolationMode;
  /** `codespace.exec.network`, read fresh for every command. */
  readonly network: () => NetworkMode;
  /** `codespace.exec.gitWrites`, read fresh for every command (default `none`: the whole `.git` read-only). */
  readonly gitWrites?: () => GitWrites;
  /** `codespace.exec.incompleteProtection`, read fresh for every command (default `refuse`). */
  readonly incompleteProtection?: () => IncompleteProtection;
  /** What the editor's git does with repositories a command creates (the extension reads VS Code's git settings). */
  readonly newRepositories?: () => NewRepositoryExposure;
  /** `codespace.exec.maxProcesses`, read fresh for every command: processes of one sandboxed command tree (0: no bound). */
  readonly maxProcesses?: () => number;
  /** The allow-list entries for `domains` (`codespace.exec.allowedDomains`, plus the registry preset when on), read fresh. */
  readonly allowedDomains?: () => readonly string[];
  /** `codespace.exec.unixSockets`, read fresh for every command (default `block`: the seccomp filter, fail closed; seccomp.ts). */
  readonly unixSockets?: () => UnixSocketMode;
  /** The bwrap binary. Default: the first of /usr/bin, /usr/local/bin, /bin (never the workspace's PATH). */
  readonly bwrapPath?: string;
  /** The relay run inside a `domains` sandbox (default: netRelay.js beside this module, dist/ in the bundle). */
  readonly relayScript?: string;
  /** Tests only (see TestHosts): never built from a setting. */
  readonly testHosts?: TestHosts;
}

export interface CommandSandboxOptions extends IsolationSettings {
  readonly logger: Logger;
}

/** What a backend starts instead of the command, in the verified working directory. */
export interface SandboxedLaunch {
  readonly file: string;
  readonly args: string[];
  /** Call once the process has ended, or when it could not be started (idempotent): gives back placeholders. */
  readonly release: () => void;
}

/** A backend's spawn request (`file` resolved to an absolute path), and whether it runs on a terminal. */
export interface LaunchRequest extends Pick<SpawnOptions, 'file' | 'args' | 'cwd' | 'root' | 'env'> {
  readonly tty: boolean;
  /** argv[0] the command gets (what the caller named it); default `file`. */
  readonly argv0?: string;
}

interface ProbeResult {
  readonly ok: boolean;
  readonly reason?: string;
  /** `domains` only: the sandbox works but the network relay does not start, so commands are refused. */
  readonly relayFailure?: string;
  /** The sandbox works but bwrap could not apply the Unix-socket filter (seccomp.ts), so commands are refused. */
  readonly filterFailure?: string;
}

const SH = '/bin/sh';
const BWRAP_LOCATIONS = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
const ENV_LOCATIONS = ['/usr/bin/env', '/bin/env'];
const MKFIFO_LOCATIONS = ['/usr/bin/mkfifo', '/bin/mkfifo'];

/**
 * Outside the sandbox, in the folder the backend opened and verified: keep it open as fd 3 for the check inside;
 * open bwrap's own arguments ($1) as fd 4 and the command line ($2) as fd 5, and delete both files (the open
 * descriptors keep them readable); open the seccomp filter ($3, /dev/null without one) as fd 6 for `--seccomp`. Neither list ever passes through an argv: bwrap refuses more than 9000
 * arguments, and every byte a wrapper adds to the command line is one the command can no longer have.
 * On a terminal also ignore the keyboard's signals, which would otherwise kill bwrap itself (it shares the
 * terminal's foreground process group with the command, and a dead bwrap takes the sandbox with it); inside,
 * env(1) gives the command the default handling back.
 */
const OUTER_PIPES = `exec 3<. 4<"$1" 5<"$2" ${SECCOMP_FD}<"$3" && rm -f -- "$1" "$2" && shift 3 && exec "$@"`;
const OUTER_TTY = `trap '' INT QUIT TSTP; ${OUTER_PIPES}`;
/**
 * Inside (bash): bwrap changed to the logical path; run only if that is the very folder verified outside. Then
 * read the command line (NUL-separated: argv[0], the program, its arguments) from fd 5, bound the processes of the
 * tree when $1 says so, and exec it with exactly that argv.
 */
export const INNER_CHECK =
  '[ . -ef /proc/self/fd/3 ] || { echo "CodeSpace: the working directory was replaced while the sandbox started; the command did not run." >&2; exit 126; }; ' +
  `exec 3<&- 4<&- ${SECCOMP_FD}<&-; ` + 'mapfile -d "" -t argv <&5 && exec 5<&- && [ "${#argv[@]}" -ge 2 ] || { echo "CodeSpace: the command line could not be read in the sandbox; the command did not run." >&2; exit 126; }; ' +
  'if [ -n "$1" ]; then ulimit -u "$1" || { echo "CodeSpace: the process limit could not be set; the command did not run." >&2; exit 126; }; fi; ' +
  'exec -a "${argv[0]}" "${argv[@]:1}"';
const BASH_LOCATIONS = ['/bin/bash', '/usr/bin/bash'];
const TTY_SIGNALS = '--default-signal=INT,QUIT,TSTP';

/**
 * The bubblewrap command sandbox: decides, per command, from the settings and a probe, whether and how the
 * command runs sandboxed, and reports the same to workspace_info.
 *
 * The probe runs a trivial command with the exact launch used for real ones (both the pipe and the terminal
 * variant) once per network mode, again whenever the isolation setting changes. `auto` without a working
 * sandbox runs commands unsandboxed and says so (once in the log, always in workspace_info); `required` refuses
 * them (SpawnError 'isolation' → EXEC_DISABLED). When isolation is on, a plan that cannot be built refuses the
 * command: it never falls back to running it unsandboxed.
 */
export class CommandSandbox implements CommandIsolation {
  private readonly logger: Logger;
  private probes = new Map<string, Promise<ProbeResult>>();
  private lastMode: IsolationMode | undefined;
  private readonly logged = new Set<string>();
  private runDir: OwnTempDir | undefined;
  private sequence = 0;
  private readonly proxy: NetworkProxy;

  constructor(private readonly options: CommandSandboxOptions) {
    this.logger = options.logger;
    this.proxy = new NetworkProxy({ logger: options.logger, allowedDomains: () => this.allowedDomains(), ...(options.testHosts ? { testHosts: options.testHosts } : {}) });
  }

  /** Stops the network proxy (commands still running lose their way out) and removes the private folder. */
  close(): Promise<void> {
    this.runDir?.remove();
    this.runDir = undefined;
    return this.proxy.close();
  }

  /** The valid allow-list patterns; entries that are no pattern are named once in the log. */
  private allowedDomains(): string[] {
    const { patterns, invalid } = parseAllowList(this.options.allowedDomains?.() ?? []);
    for (const bad of invalid) {
      this.once(`domain:${bad}`, () => this.logger.warn(`[network] ignored ${JSON.stringify(bad)} in codespace.exec.allowedDomains: not a domain name or *.domain pattern (IP addresses and URLs are not accepted).`));
    }
    return patterns;
  }

  /** The bwrap binary to use, or undefined when none is installed. */
  bwrap(): string | undefined {
    return this.options.bwrapPath ?? firstExisting(BWRAP_LOCATIONS);
  }

  private mode(): IsolationMode {
    const m = this.options.mode();
    const mode: IsolationMode = m === 'off' || m === 'required' ? m : 'auto';
    if (this.lastMode !== mode) {
      // A changed setting re-probes (bwrap may have been installed meanwhile).
      if (this.lastMode !== undefined) this.probes = new Map();
      this.lastMode = mode;
    }
    return mode;
  }

  private unixSockets(): UnixSocketMode {
    return this.options.unixSockets?.() === 'allow' ? 'allow' : 'block';
  }

  private network(): NetworkMode {
    const n = this.options.network();
    return n === 'allow' || n === 'domains' ? n : 'block';
  }

  private gitWrites(): GitWrites {
    return this.options.gitWrites?.() === 'commit' ? 'commit' : 'none';
  }

  private incompleteProtection(): IncompleteProtection {
    return this.options.incompleteProtection?.() === 'protectKnown' ? 'protectKnown' : 'refuse';
  }

  /** The process bound for the next command, or null with the reason. */
  processLimit(): { limit: number | null; reason?: string } {
    const n = this.options.maxProcesses?.() ?? DEFAULT_MAX_PROCESSES;
    if (!Number.isInteger(n) || n <= 0) return { limit: null, reason: 'codespace.exec.maxProcesses is 0 (no bound).' };
    if (process.getuid?.() === 0) return { limit: null, reason: 'CodeSpace runs as root, and the kernel applies no process limit (RLIMIT_NPROC) to root.' };
    if (!processCountPerNamespace()) {
      return { limit: null, reason: 'this kernel (before Linux 5.14) counts RLIMIT_NPROC over all of the user\'s processes, so a bound would also count the desktop\'s own processes.' };
    }
    return { limit: Math.max(MIN_MAX_PROCESSES, n) };
  }

  /** Starts the probe for the current settings (at start-up), without waiting for it. */
  warmUp(): Promise<IsolationStatus> {
    return this.status();
  }

  async status(root?: string): Promise<IsolationStatus> {
    const mode = this.mode();
    if (mode === 'off') {
      return { command_sandbox: { enabled: false, kind: 'none', reason: 'codespace.exec.isolation is "off".' }, network: 'unknown', refusing: false };
    }
    const network = this.network();
    const unix = this.unixSockets();
    // `block` with a filter that cannot be built here still probes the sandbox (without it), to say which is missing.
    const cannotBuild = unix === 'block' ? seccompUnavailable() : undefined;
    const probe = await this.probe(network, unix === 'block' && cannotBuild === undefined);
    if (probe.ok) {
      const gitWrites = this.gitWrites();
      const filterProblem = unix === 'block' ? (cannotBuild ?? probe.filterFailure) : undefined;
      const common = {
        ...(root !== undefined ? await describeProtection(root, gitWrites, this.incompleteProtection()) : {}),
        ...(this.options.newRepositories ? { new_repositories: this.options.newRepositories() } : {}),
        git_writes: gitWrites,
        max_processes: this.processLimit(),
        unix_sockets: unixSocketStatus(unix, filterProblem),
        ...(network === 'domains' ? { allowed_domains: this.allowedDomains() } : {}),
      };
      // Never "run without the filter" or "without the relay": either would be a weaker sandbox than the settings ask for.
      const refusal =
        filterProblem !== undefined
          ? `codespace.exec.unixSockets is "block" and the Unix-socket filter cannot be applied: ${filterProblem} (the documented weaker mode, codespace.exec.unixSockets "allow", runs commands without it)`
          : probe.relayFailure !== undefined
            ? `codespace.exec.network is "domains" and the network relay cannot start in the sandbox: ${probe.relayFailure}`
            : undefined;
      return {
        command_sandbox: { enabled: true, kind: 'bubblewrap', ...(refusal ? { reason: refusal } : {}) },
        network: network === 'block' ? 'blocked' : network === 'allow' ? 'allowed' : 'domains',
        refusing: refusal !== undefined,
        ...common,
      };
    }
    const reason = probe.reason ?? 'the sandbox is unavailable';
    if (mode === 'required') {
      return { command_sandbox: { enabled: false, kind: 'none', reason: `codespace.exec.isolation is "required" and ${reason}` }, network: 'unknown', refusing: true };
    }
    this.once(`auto:${reason}`, () => this.logger.warn(`[sandbox] commands run WITHOUT a sandbox (codespace.exec.isolation "auto"): ${reason}`));
    return { command_sandbox: { enabled: false, kind: 'none', reason }, network: 'unknown', refusing: false };
  }

  /**
   * How to start one command: undefined means without a sandbox (isolation off, or `auto` with none available);
   * otherwise the argv to spawn, in the directory the backend opened and verified, and `release`, which the
   * backend calls once the process has ended (or failed to start). Throws SpawnError('isolation') when the
   * command must not run.
   */
  async launch(request: LaunchRequest): Promise<SandboxedLaunch | undefined> {
    const status = await this.status();
    if (status.refusing) throw new SpawnError('isolation', `Commands are refused: ${status.command_sandbox.reason ?? 'no sandbox'}.`);
    if (!status.command_sandbox.enabled) return undefined;
    const bwrap = this.bwrap();
    try {
      if (!bwrap) throw new SandboxPlanError('bwrap is no longer installed.');
      if (request.root === undefined) throw new SandboxPlanError('no workspace root was given.');
      const root = fs.realpathSync(request.root);
      const plan = await planProtection(root, status.git_writes ?? 'none');
      requireComplete(plan, this.incompleteProtection());
      const nested = plan.nested;
      const network: NetworkMode = status.network === 'allowed' ? 'allow' : status.network === 'domains' ? 'domains' : 'block';
      const bridge = network === 'domains' ? await this.bridge() : undefined;
      return this.build(bwrap, {
        root,
        nested,
        cwd: request.cwd,
        argv0: request.argv0 ?? request.file,
        file: request.file,
        args: request.args,
        env: request.env,
        tty: request.tty,
        network,
        bridge,
        gitWrites: status.git_writes ?? 'none',
        maxProcesses: status.max_processes?.limit ?? null,
        filter: status.unix_sockets?.blocked === true,
      });
    } catch (err) {
      const why = describeError(err);
      throw new SpawnError('isolation', `The command sandbox could not be set up, so the command did not run: ${why}`, { cause: err });
    }
  }

  /** This extension host's private folder for the argument files and the empty file (made on first use, 0700). */
  private privateDir(): string {
    if (this.runDir === undefined || !fs.existsSync(this.runDir.path)) this.runDir = ownTempDir('codespace-sandbox-');
    const empty = path.join(this.runDir.path, 'empty');
    if (!fs.existsSync(empty)) fs.writeFileSync(empty, '', { mode: 0o444 });
    return this.runDir.path;
  }

  /** The Unix-socket filter (seccomp.ts) in the private folder, written once; throws when it cannot be built here. */
  private filterFile(dir: string): string {
    const file = path.join(dir, 'unix-sockets.bpf');
    if (!fs.existsSync(file)) fs.writeFileSync(file, unixSocketFilter(), { mode: 0o444 });
    return file;
  }

  private build(bwrap: string, o: BuildRequest): SandboxedLaunch {
    const bash = firstExisting(BASH_LOCATIONS);
    if (!bash) throw new SandboxPlanError('bash was not found in /bin or /usr/bin (the sandbox reads the command line with it).');
    const dir = this.privateDir();
    const protect = currentProtected(o.root, o.gitWrites, o.nested);
    const flags = bubblewrapArgs({ root: o.root, cwd: path.normalize(o.cwd), network: o.network, ...(o.bridge ? { netBridge: o.bridge, nestedFilter: o.filter } : {}), tty: o.tty, protect, hide: mergeHidden(hiddenEntries(o.env), runtimeSocketEntries(o.env)), emptyFile: path.join(dir, 'empty') });
    // bubblewrapArgs ends with `--`: that stays on the command line, after `--args`.
    const filter = o.filter ? seccompLaunch(bwrap, o.bridge !== undefined) : { outer: [], inner: [] };
    const own = [...flags.slice(0, -1), ...filter.outer];
    const filterFile = o.filter ? this.filterFile(dir) : '/dev/null';
    const id = `${process.pid}-${++this.sequence}`;
    const argsFile = path.join(dir, `bwrap-${id}`);
    const cmdFile = path.join(dir, `command-${id}`);
    const nul = (list: readonly string[]): Buffer => Buffer.concat(list.map((a) => Buffer.from(`${a}\0`, 'utf8')));
    const release = holdPlaceholders(protect);
    try {
      fs.writeFileSync(argsFile, nul(own), { mode: 0o600 });
      fs.writeFileSync(cmdFile, nul([o.argv0, o.file, ...o.args]), { mode: 0o600 });
    } catch (err) {
      release();
      throw err;
    }
    const discard = (): void => {
      // The outer shell deletes both files once open; this is for a process that never started.
      for (const f of [argsFile, cmdFile]) fs.rmSync(f, { force: true });
      release();
    };
    // --norc: bash would read ~/.bashrc when its stdin is a socket (Node's pipes are), taking it for a remote shell.
    const inner = [bash, '--norc', '--noprofile', '-c', INNER_CHECK, 'bash', o.maxProcesses === null ? '' : String(o.maxProcesses)];
    const head = ['-c', o.tty ? OUTER_TTY : OUTER_PIPES, 'sh', argsFile, cmdFile, filterFile, bwrap, '--args', '4', '--'];
    // With `domains` the network relay starts inside first (netBridge.ts), then the command as always (under the
    // filter's own nested bwrap when there is one: the relay itself must open Unix sockets).
    const relay = o.bridge ? [...relayLauncher(SH, o.bridge), ...filter.inner] : [];
    if (!o.tty) return { file: SH, args: [...head, ...relay, ...inner], release: discard };
    const env = firstExisting(ENV_LOCATIONS);
    if (!env) {
      discard();
      throw new SandboxPlanError('env(1) was not found in /usr/bin or /bin.');
    }
    return { file: SH, args: [...head, ...relay, env, TTY_SIGNALS, ...inner], release: discard };
  }

  /** The network proxy's socket (started on first use) and what runs the relay inside. */
  private async bridge(): Promise<NetBridge> {
    const mkfifo = firstExisting(MKFIFO_LOCATIONS);
    if (!mkfifo) throw new SandboxPlanError('mkfifo(1) was not found in /usr/bin or /bin (needed by codespace.exec.network "domains").');
    const relayScript = this.options.relayScript ?? path.join(__dirname, 'netRelay.js');
    if (!fs.existsSync(relayScript)) throw new SandboxPlanError(`the network relay ${relayScript} is missing.`);
    return { socket: await this.proxy.socketPath(), relayScript, node: process.execPath, mkfifo };
  }

  private probe(network: NetworkMode, filter: boolean): Promise<ProbeResult> {
    const key = `${network}:${String(filter)}`;
    let p = this.probes.get(key);
    if (!p) {
      p = network === 'domains' ? this.probeDomains(filter) : this.probeFiltered(network, filter);
      this.probes.set(key, p);
    }
    return p;
  }

  /**
   * With the filter: when the sandbox fails only because of it (bwrap without `--seccomp`, a kernel without
   * seccomp filters), the sandbox works and commands are refused, so `auto` never falls back to running them
   * unsandboxed because of the filter.
   */
  private async probeFiltered(network: NetworkMode, filter: boolean): Promise<ProbeResult> {
    const r = await this.runProbe(network, filter);
    if (r.ok || !filter) return r;
    const base = await this.runProbe(network, false);
    return base.ok ? { ok: true, filterFailure: r.reason ?? 'unknown reason' } : base;
  }

  /**
   * `domains`: whether the sandbox works is the `block` probe's answer (so `auto` never falls back to running
   * commands unsandboxed because of the relay); a relay that does not start refuses commands instead.
   */
  private async probeDomains(filter: boolean): Promise<ProbeResult> {
    const base = await this.probe('block', filter);
    if (!base.ok || base.filterFailure !== undefined) return base;
    const withRelay = await this.probeFiltered('domains', filter);
    return withRelay.ok ? withRelay : { ok: true, relayFailure: withRelay.reason ?? 'unknown reason' };
  }

  private async runProbe(network: NetworkMode, filter: boolean): Promise<ProbeResult> {
    if (process.platform !== 'linux') return { ok: false, reason: 'the bubblewrap sandbox is only available on Linux.' };
    const bwrap = this.bwrap();
    if (!bwrap) return { ok: false, reason: 'bubblewrap (bwrap) is not installed (looked in /usr/bin, /usr/local/bin, /bin); install the "bubblewrap" package.' };
    if (!fs.existsSync(SH)) return { ok: false, reason: `${SH} is missing.` };
    if (!firstExisting(BASH_LOCATIONS)) return { ok: false, reason: 'bash is missing (looked in /bin and /usr/bin); the sandbox needs it.' };
    const own = ownTempDir('codespace-sandbox-probe-');
    const dir = fs.realpathSync(own.path);
    try {
      const env: Record<string, string> = { PATH: '/usr/bin:/bin', ...(process.env.HOME ? { HOME: process.env.HOME } : {}) };
      const bridge = network === 'domains' ? await this.bridge() : undefined;
      for (const tty of [false, true]) {
        const launch = this.build(bwrap, { root: dir, nested: [], cwd: dir, argv0: SH, file: SH, args: ['-c', 'exit 0'], env, tty, network, bridge, gitWrites: 'none', maxProcesses: this.processLimit().limit, filter });
        const r = await run(launch, dir, env);
        launch.release();
        if (r.code !== 0) {
          const reason = explainProbeFailure(r.stderr, r.code, r.signal);
          this.logger.warn(`[sandbox] probe (${tty ? 'terminal' : 'pipes'}, network ${network}${filter ? ', Unix-socket filter' : ''}) failed: ${r.stderr.trim() || `exit ${String(r.code)}`}`);
          return { ok: false, reason };
        }
      }
      this.once(`ok:${network}:${String(filter)}`, () =>
        this.logger.info(`[sandbox] commands run in a bubblewrap sandbox (${bwrap}, network ${network === 'block' ? 'blocked' : network === 'allow' ? 'allowed' : 'through the domain proxy'}, Unix sockets ${filter ? 'blocked' : 'not blocked'})`),
      );
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: `the sandbox probe failed: ${describeError(err)}` };
    } finally {
      own.remove();
    }
  }

  private once(key: string, fn: () => void): void {
    if (this.logged.has(key)) return;
    this.logged.add(key);
    fn();
  }
}

interface BuildRequest {
  readonly root: string;
  readonly nested: readonly NestedRepository[];
  readonly cwd: string;
  readonly argv0: string;
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly tty: boolean;
  readonly network: NetworkMode;
  readonly bridge: NetBridge | undefined;
  readonly gitWrites: GitWrites;
  readonly maxProcesses: number | null;
  /** Apply the Unix-socket filter (seccomp.ts). */
  readonly filter: boolean;
}

/** workspace_info's `unix_sockets`: blocked by the filter, or not, and why. */
function unixSocketStatus(mode: UnixSocketMode, problem: string | undefined): NonNullable<IsolationStatus['unix_sockets']> {
  if (mode === 'allow') return { blocked: false, reason: 'codespace.exec.unixSockets is "allow": commands may connect to the Unix sockets they can reach (only the hidden folders are out of sight).' };
  if (problem !== undefined) return { blocked: false, reason: problem };
  return { blocked: true, method: 'seccomp' };
}

/** Default of `codespace.exec.maxProcesses`, and the least it can be set to (a shell, a build tool and its workers). */
export const DEFAULT_MAX_PROCESSES = 512;
export const MIN_MAX_PROCESSES = 16;

/**
 * Whether RLIMIT_NPROC counts per user namespace (Linux 5.14 and later, where it moved into the namespace's
 * ucounts): set inside the sandbox's fresh user namespace, it then bounds that command's processes only.
 */
export function processCountPerNamespace(release = os.release()): boolean {
  if (process.platform !== 'linux') return false;
  const m = /^(\d+)\.(\d+)/.exec(release);
  if (!m) return false;
  const [major, minor] = [Number(m[1]), Number(m[2])];
  return major > 5 || (major === 5 && minor >= 14);
}
