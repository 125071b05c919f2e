import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { CommandIsolation, IsolationStatus } from '../../core/ports/commandIsolation';
import type { Logger } from '../../core/ports/logger';
import { SpawnError } from '../../core/ports/processBackend';
import type { SpawnOptions } from '../../core/ports/processBackend';
import { SandboxPlanError, bubblewrapArgs } from './bubblewrapArgs';
import { hiddenEntries, protectedEntries } from './sandboxInventory';
import type { NetBridge } from './netBridge';
import { relayLauncher } from './netBridge';
import type { TestHosts } from './networkProxy';
import { NetworkProxy } from './networkProxy';
import { parseAllowList } from '../../core/policy/networkDomains';

export type IsolationMode = 'auto' | 'required' | 'off';
/** `domains`: no network but the network proxy, which admits the allowed domains only (networkProxy.ts). */
export type NetworkMode = 'block' | 'allow' | 'domains';

export interface IsolationSettings {
  /** `codespace.exec.isolation`, read fresh for every command. */
  readonly mode: () => IsolationMode;
  /** `codespace.exec.network`, read fresh for every command. */
  readonly network: () => NetworkMode;
  /** The allow-list entries for `domains` (`codespace.exec.allowedDomains`, plus the registry preset when on), read fresh. */
  readonly allowedDomains?: () => readonly string[];
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
}

/** A backend's spawn request (`file` resolved to an absolute path), and whether it runs on a terminal. */
export interface LaunchRequest extends Pick<SpawnOptions, 'file' | 'args' | 'cwd' | 'root' | 'env'> {
  readonly tty: boolean;
}

interface ProbeResult {
  readonly ok: boolean;
  readonly reason?: string;
  /** `domains` only: the sandbox works but the network relay does not start, so commands are refused. */
  readonly relayFailure?: string;
}

const SH = '/bin/sh';
const BWRAP_LOCATIONS = ['/usr/bin/bwrap', '/usr/local/bin/bwrap', '/bin/bwrap'];
const ENV_LOCATIONS = ['/usr/bin/env', '/bin/env'];
const MKFIFO_LOCATIONS = ['/usr/bin/mkfifo', '/bin/mkfifo'];
const PROBE_TIMEOUT_MS = 10_000;

/**
 * Outside the sandbox, in the folder the backend opened and verified: keep it open as fd 3 for the check inside.
 * On a terminal also ignore the keyboard's signals, which would otherwise kill bwrap itself (it shares the
 * terminal's foreground process group with the command, and a dead bwrap takes the sandbox with it); inside,
 * env(1) gives the command the default handling back.
 */
const OUTER_PIPES = 'exec 3<. && exec "$@"';
const OUTER_TTY = `trap '' INT QUIT TSTP; ${OUTER_PIPES}`;
/** Inside: bwrap changed to the logical path; run only if that is the very folder verified outside. */
export const INNER_CHECK =
  '[ . -ef /proc/self/fd/3 ] || { echo "CodeSpace: the working directory was replaced while the sandbox started; the command did not run." >&2; exit 126; }; exec 3<&-; exec "$@"';
const TTY_SIGNALS = '--default-signal=INT,QUIT,TSTP';

function firstExisting(candidates: readonly string[]): string | undefined {
  for (const c of candidates) {
    try {
      fs.accessSync(c, fs.constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

/** Turns bwrap's complaint into a reason a developer can act on. */
export function explainProbeFailure(stderr: string, code: number | null, signal: string | null): string {
  const line = stderr.split('\n').map((l) => l.trim()).find((l) => l !== '') ?? (signal ? `killed by ${signal}` : `exit code ${String(code)}`);
  if (/user namespace|uid map|setting up uid|No permissions to creat|Operation not permitted|Permission denied|Creating new namespace failed/i.test(line)) {
    return (
      `bwrap cannot create an unprivileged user namespace here (${line}). Allow them: on Ubuntu 23.10 and later AppArmor restricts them ` +
      '(install an AppArmor profile for /usr/bin/bwrap, or `sysctl kernel.apparmor_restrict_unprivileged_userns=0`); on Debian and others ' +
      '`sysctl kernel.unprivileged_userns_clone=1` and a non-zero `user.max_user_namespaces`; in a container, allow user namespaces in its seccomp/security profile.'
    );
  }
  if (/default-signal/.test(line)) return `env(1) does not know --default-signal (coreutils 8.31 or later is needed for terminal commands in the sandbox): ${line}`;
  return `bwrap failed its start-up check: ${line}`;
}

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
  private probes = new Map<NetworkMode, Promise<ProbeResult>>();
  private lastMode: IsolationMode | undefined;
  private readonly logged = new Set<string>();
  private readonly proxy: NetworkProxy;

  constructor(private readonly options: CommandSandboxOptions) {
    this.logger = options.logger;
    this.proxy = new NetworkProxy({ logger: options.logger, allowedDomains: () => this.allowedDomains(), ...(options.testHosts ? { testHosts: options.testHosts } : {}) });
  }

  /** Stops the network proxy (commands still running lose their way out). */
  close(): Promise<void> {
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

  private network(): NetworkMode {
    const n = this.options.network();
    return n === 'allow' || n === 'domains' ? n : 'block';
  }

  /** Starts the probe for the current settings (at start-up), without waiting for it. */
  warmUp(): Promise<IsolationStatus> {
    return this.status();
  }

  async status(): Promise<IsolationStatus> {
    const mode = this.mode();
    if (mode === 'off') {
      return { command_sandbox: { enabled: false, kind: 'none', reason: 'codespace.exec.isolation is "off".' }, network: 'unknown', refusing: false };
    }
    const network = this.network();
    const probe = await this.probe(network);
    if (probe.ok) {
      if (network === 'domains') {
        // Never "run without the relay": that would be a sandbox without network, or (worse) none at all.
        const relay = probe.relayFailure;
        return {
          command_sandbox: { enabled: true, kind: 'bubblewrap', ...(relay ? { reason: `codespace.exec.network is "domains" and the network relay cannot start in the sandbox: ${relay}` } : {}) },
          network: 'domains',
          allowed_domains: this.allowedDomains(),
          refusing: relay !== undefined,
        };
      }
      return { command_sandbox: { enabled: true, kind: 'bubblewrap' }, network: network === 'block' ? 'blocked' : 'allowed', refusing: false };
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
   * otherwise the argv to spawn, in the directory the backend opened and verified. Throws SpawnError('isolation')
   * when the command must not run.
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
      const network: NetworkMode = status.network === 'allowed' ? 'allow' : status.network === 'domains' ? 'domains' : 'block';
      const bridge = network === 'domains' ? await this.bridge() : undefined;
      return this.build(bwrap, { root, cwd: request.cwd, file: request.file, args: request.args, env: request.env, tty: request.tty, network, bridge });
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new SpawnError('isolation', `The command sandbox could not be set up, so the command did not run: ${why}`, { cause: err });
    }
  }

  private build(
    bwrap: string,
    o: { root: string; cwd: string; file: string; args: readonly string[]; env: Readonly<Record<string, string>>; tty: boolean; network: NetworkMode; bridge: NetBridge | undefined },
  ): SandboxedLaunch {
    const flags = bubblewrapArgs({ root: o.root, cwd: path.normalize(o.cwd), network: o.network, ...(o.bridge ? { netBridge: o.bridge } : {}), tty: o.tty, protect: protectedEntries(o.root), hide: hiddenEntries(o.env) });
    const inner = [SH, '-c', INNER_CHECK, 'sh', o.file, ...o.args];
    // With `domains` the network relay starts inside first (netBridge.ts), then the command as always.
    const relay = o.bridge ? relayLauncher(SH, o.bridge) : [];
    if (!o.tty) return { file: SH, args: ['-c', OUTER_PIPES, 'sh', bwrap, ...flags, ...relay, ...inner] };
    const env = firstExisting(ENV_LOCATIONS);
    if (!env) throw new SandboxPlanError('env(1) was not found in /usr/bin or /bin.');
    return { file: SH, args: ['-c', OUTER_TTY, 'sh', bwrap, ...flags, ...relay, env, TTY_SIGNALS, ...inner] };
  }

  /** The network proxy's socket (started on first use) and what runs the relay inside. */
  private async bridge(): Promise<NetBridge> {
    const mkfifo = firstExisting(MKFIFO_LOCATIONS);
    if (!mkfifo) throw new SandboxPlanError('mkfifo(1) was not found in /usr/bin or /bin (needed by codespace.exec.network "domains").');
    const relayScript = this.options.relayScript ?? path.join(__dirname, 'netRelay.js');
    if (!fs.existsSync(relayScript)) throw new SandboxPlanError(`the network relay ${relayScript} is missing.`);
    return { socket: await this.proxy.socketPath(), relayScript, node: process.execPath, mkfifo };
  }

  private probe(network: NetworkMode): Promise<ProbeResult> {
    let p = this.probes.get(network);
    if (!p) {
      p = network === 'domains' ? this.probeDomains() : this.runProbe(network);
      this.probes.set(network, p);
    }
    return p;
  }

  /**
   * `domains`: whether the sandbox works is the `block` probe's answer (so `auto` never falls back to running
   * commands unsandboxed because of the relay); a relay that does not start refuses commands instead.
   */
  private async probeDomains(): Promise<ProbeResult> {
    const base = await this.probe('block');
    if (!base.ok) return base;
    const withRelay = await this.runProbe('domains');
    return withRelay.ok ? withRelay : { ok: true, relayFailure: withRelay.reason ?? 'unknown reason' };
  }

  private async runProbe(network: NetworkMode): Promise<ProbeResult> {
    if (process.platform !== 'linux') return { ok: false, reason: 'the bubblewrap sandbox is only available on Linux.' };
    const bwrap = this.bwrap();
    if (!bwrap) return { ok: false, reason: 'bubblewrap (bwrap) is not installed (looked in /usr/bin, /usr/local/bin, /bin); install the "bubblewrap" package.' };
    if (!fs.existsSync(SH)) return { ok: false, reason: `${SH} is missing.` };
    const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-sandbox-probe-')));
    try {
      const env: Record<string, string> = { PATH: '/usr/bin:/bin', ...(process.env.HOME ? { HOME: process.env.HOME } : {}) };
      const bridge = network === 'domains' ? await this.bridge() : undefined;
      for (const tty of [false, true]) {
        const launch = this.build(bwrap, { root: dir, cwd: dir, file: SH, args: ['-c', 'exit 0'], env, tty, network, bridge });
        const r = await run(launch, dir, env);
        if (r.code !== 0) {
          const reason = explainProbeFailure(r.stderr, r.code, r.signal);
          this.logger.warn(`[sandbox] probe (${tty ? 'terminal' : 'pipes'}, network ${network}) failed: ${r.stderr.trim() || `exit ${String(r.code)}`}`);
          return { ok: false, reason };
        }
      }
      this.once(`ok:${network}`, () => this.logger.info(`[sandbox] commands run in a bubblewrap sandbox (${bwrap}, network ${network === 'block' ? 'blocked' : network === 'allow' ? 'allowed' : 'through the domain proxy'})`));
      return { ok: true };
    } catch (err) {
      return { ok: false, reason: `the sandbox probe failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }

  private once(key: string, fn: () => void): void {
    if (this.logged.has(key)) return;
    this.logged.add(key);
    fn();
  }
}

function run(launch: SandboxedLaunch, cwd: string, env: Record<string, string>): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(launch.file, launch.args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4096)));
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.once('error', (err) => {
      clearTimeout(timer);
      resolve({ code: null, signal: null, stderr: err.message });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stderr });
    });
  });
}
