// The processes module as the composition starts it: the children an earlier extension host left are reaped, the
// command sandbox is made (and probed), the backends (node-pty, pipes, or the process host beside the window), the
// supervisor over them, with the processes an earlier extension host of this window left in the process host
// adopted, and the survivor registry that lets the next start end this one's children after a crash.
import * as path from 'node:path';
import type { Logger } from '../../../base/logger';
import { SecretRedactor } from '../../../base/secretRedactor';
import type { StepTimes } from '../../../base/stepTimes';
import type { Limits } from '../../../kernel/limits';
import { NO_ISOLATION } from '../common/commandIsolation';
import type { CommandIsolation } from '../common/commandIsolation';
import type { ProcessBackend } from '../common/processBackend';
import { ProcessSupervisor } from '../common/supervisor';
import { ChildProcessBackend } from './childProcessBackend';
import { NodePtyBackend } from './nodePtyBackend';
import type { NodePtyCandidate } from './nodePtyLoader';
import type { ProcessHostSettings } from './processHost/hostBackends';
import { ProcessHostBackends, processHostStorageDir } from './processHost/hostBackends';
import type { IsolationSettings } from './sandbox/commandSandbox';
import { CommandSandbox } from './sandbox/commandSandbox';
import { SurvivorRegistry, reapSurvivors } from './survivors';

type Backends = { tty: () => ProcessBackend; pipes: () => ProcessBackend };

export interface ProcessesOptions {
  /** Absolute folder for durable state (the operation ledger, the survivors' records). */
  readonly storageDir: string;
  readonly logger: Logger;
  readonly limits: () => Limits;
  /** What workspace_info reports as the owner of the processes' lifetime (`vscode-window`; the process host's own when it runs them). */
  readonly lifetime: string;
  /** Where the default terminal backend looks for node-pty, in order (see nodePtyLoader.ts). Default: its own resolution. */
  readonly nodePty?: readonly NodePtyCandidate[];
  /** Process backends (default: node-pty for terminals, child_process for pipes, both in the command sandbox). */
  readonly backends?: Backends;
  /**
   * The command sandbox settings (`codespace.exec.isolation`, `codespace.exec.network`), read fresh per command.
   * Absent: no sandbox (isolation off), as plain-Node tests that do not ask for one expect. Applies to the default
   * backends; with `backends` given, pass `sandbox` (below) to them yourself.
   */
  readonly isolation?: IsolationSettings;
  /**
   * The caller probes the sandbox itself (`services.isolation.status()`) once it serves requests, instead of at
   * assembly: the probe starts a process, which the extension keeps out of the time to its first answer.
   */
  readonly probeSandboxLater?: boolean;
  /**
   * Runs agents' processes in a process host beside the window, so they outlive a reload (processHost/). Absent:
   * in this process, ended with it. Uses the default backends (or `backends`) as the fallback when it cannot start.
   */
  readonly processHost?: Pick<ProcessHostSettings, 'script' | 'graceMs' | 'execPath' | 'socketRoot'> & {
    /**
     * The storage folder VS Code gave this extension host, when `storageDir` is another one (stateFolder.ts): the
     * host's records are kept in its workspace's first folder (processHostStorageDir). Default: `storageDir`.
     */
    readonly vscodeStorageDir?: string;
  };
  /** Backends built by the caller around the assembled sandbox (tests with their own grace periods). */
  readonly sandboxedBackends?: (sandbox: CommandSandbox) => Backends;
  /** Redaction of credentials from command output and search lines (default: on, no listed values). */
  readonly redaction?: { readonly enabled: () => boolean; readonly values: () => readonly string[] };
}

export interface ProcessesModule {
  readonly supervisor: ProcessSupervisor;
  /** Whether commands run in a sandbox, and with what network. */
  readonly isolation: CommandIsolation;
  /** Redacts credentials (ours among them) from what agents read. */
  readonly redactor: SecretRedactor;
  /** The process host's side in this extension host, when processes run there. */
  readonly host?: ProcessHostBackends;
  /** The processes adopted from the process host, as its records had them. */
  readonly adopted: Awaited<ReturnType<ProcessHostBackends['attachExisting']>>;
  /**
   * Ends every process (graceful first); those in the process host are let go instead, for the next extension host
   * of this window to take back. Then the sandbox and the survivor registry close.
   */
  stop(): Promise<void>;
}

export async function assembleProcesses(o: ProcessesOptions, steps: StepTimes): Promise<ProcessesModule> {
  // Children an earlier extension host left running (it crashed before ending them) go before any new one starts.
  const survivorsDir = path.join(o.storageDir, 'survivors');
  await reapSurvivors({ directory: survivorsDir, logger: o.logger });
  steps.mark('survivors');
  const sandbox = o.isolation ? new CommandSandbox({ ...o.isolation, logger: o.logger }) : undefined;
  // Probe at start, so the first command and workspace_info do not wait for it (and the log says what holds).
  if (sandbox && o.probeSandboxLater !== true) void sandbox.warmUp();
  const defaultBackends = (): Backends => {
    if (sandbox && o.sandboxedBackends) return o.sandboxedBackends(sandbox);
    const pty = new NodePtyBackend({ ...(sandbox ? { sandbox } : {}), ...(o.nodePty ? { candidates: o.nodePty } : {}), logger: o.logger });
    const pipes = new ChildProcessBackend(sandbox ? { sandbox } : {});
    return { tty: () => pty, pipes: () => pipes };
  };
  // Our own tokens are the supervisor's secrets (never in a child's environment, and redacted from what agents read).
  const redactor = new SecretRedactor({
    enabled: o.redaction?.enabled ?? (() => true),
    values: o.redaction?.values ?? (() => []),
    ownTokens: () => supervisor.secretValues(),
  });
  const local = o.backends ?? defaultBackends();
  const hostWith = (settings: NonNullable<ProcessesOptions['processHost']>): ProcessHostBackends => {
    const { vscodeStorageDir, ...own } = settings;
    return new ProcessHostBackends({
      ...own,
      storageDir: processHostStorageDir(vscodeStorageDir ?? o.storageDir),
      ...(o.nodePty ? { nodePty: o.nodePty } : {}),
      ...(o.isolation ? { isolation: o.isolation } : {}),
      fallback: { tty: local.tty(), pipes: local.pipes() },
      logger: o.logger,
    });
  };
  const host = o.processHost ? hostWith(o.processHost) : undefined;
  const supervisor: ProcessSupervisor = new ProcessSupervisor({
    backends: host ? { tty: () => host.tty, pipes: () => host.pipes } : local,
    limits: o.limits,
    logger: o.logger,
    lifetime: host ? () => host.lifetime(o.lifetime) : o.lifetime,
    redactor,
  });
  // The processes an earlier extension host of this window left in the process host, with their output.
  steps.mark('backends');
  const adopted = (await host?.attachExisting()) ?? [];
  steps.mark('process host');
  for (const p of adopted) supervisor.adopt(p);
  const survivors = new SurvivorRegistry({ directory: survivorsDir, logger: o.logger });
  // Only processes of this extension host are survivors to end after a crash: the process host keeps its own.
  const watching = survivors.watch({
    onDidStart: (listener) => supervisor.onDidStart((info) => (host?.hosted(info.process_id) ? undefined : listener(info))),
    onDidExit: (listener) => supervisor.onDidExit(listener),
  });
  return {
    supervisor,
    isolation: sandbox ?? NO_ISOLATION,
    redactor,
    ...(host ? { host } : {}),
    adopted,
    async stop() {
      await supervisor.disposeAll(host ? { keep: (id) => host.hosted(id) } : {});
      host?.detach();
      await sandbox?.close();
      watching.dispose();
      survivors.dispose();
    },
  };
}
