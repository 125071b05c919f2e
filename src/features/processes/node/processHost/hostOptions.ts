import type { ProcessBackend } from '../../common/processBackend';
import type { Logger } from '../../../../base/logger';
import { ChildProcessBackend } from '../childProcessBackend';
import { NodePtyBackend } from '../nodePtyBackend';
import type { NodePtyCandidate } from '../nodePtyLoader';
import { CommandSandbox } from '../sandbox/commandSandbox';
import type { GitWrites } from '../sandbox/sandboxInventory';
import type { IsolationSnapshot } from './protocol';

export interface ProcessHostOptions {
  /** The Unix socket to listen on; its folder must exist with mode 0700 (checked by the launcher). */
  readonly socket: string;
  /** The secret a client proves on attach. Rotated on every attach (the welcome carries the next one). */
  readonly secret: string;
  /**
   * How long the host keeps its processes with no extension attached (at start, and after a detach) before it
   * ends them all and exits.
   */
  readonly graceMs: number;
  /** How long a second client waits for the attached one to answer `askWindow` (default ASK_WINDOW_MS). */
  readonly askWindowMs?: number;
  /**
   * How often the host looks at the processes it follows (default EDITOR_POLL_MS): the attached extension host's,
   * and, while no live window is attached, the editor's.
   */
  readonly editorPollMs?: number;
  /** How long a connection may take to prove the secret before it is dropped (default HELLO_MS). */
  readonly helloMs?: number;
  /** How often the attached extension is asked whether it still has its window (default HEARTBEAT_MS). */
  readonly heartbeatMs?: number;
  /** Where node-pty is looked for (nodePtyLoader.ts); default: the one this module resolves. */
  readonly nodePty?: readonly NodePtyCandidate[];
  /** The relay script a `domains` sandbox runs (default: netRelay.js beside this module). */
  readonly relayScript?: string;
  readonly logger: Logger;
  /**
   * Where the host records, as it exits, how each process it still holds ended (protocol.ts HostEndsFile), so the
   * next extension host of the window can tell how they ended. Absent: nothing is recorded.
   */
  readonly endsFile?: string;
  /** Called once the host has ended every process and closed its socket (the entry point exits then). */
  readonly onClosed?: () => void;
  /** Backends instead of node-pty and child_process (tests only); the sandbox is then not used. */
  readonly backends?: { readonly tty: ProcessBackend; readonly pipes: ProcessBackend };
}

/** The backends a host spawns with, and the command sandbox they run in (none with test backends). */
export interface LocalBackends {
  readonly tty: ProcessBackend;
  readonly pipes: ProcessBackend;
  readonly sandbox?: CommandSandbox;
}

/**
 * node-pty and child_process in the command sandbox, configured by the sandbox settings of the spawn in progress
 * (`isolation`, read at each spawn: absent means off, network blocked); or the test backends of `options`.
 */
export function localBackends(
  options: ProcessHostOptions,
  isolation: () => IsolationSnapshot | undefined,
  testHosts: Map<string, { address: string; port: number }>,
): LocalBackends {
  if (options.backends) return { tty: options.backends.tty, pipes: options.backends.pipes };
  const iso = (): IsolationSnapshot => isolation() ?? { mode: 'off', network: 'block' };
  const sandbox = new CommandSandbox({
    logger: options.logger,
    mode: () => iso().mode,
    network: () => iso().network,
    gitWrites: () => (iso().gitWrites === 'commit' ? 'commit' : 'none') as GitWrites,
    incompleteProtection: () => (iso().incompleteProtection === 'protectKnown' ? 'protectKnown' : 'refuse'),
    maxProcesses: () => iso().maxProcesses ?? 0,
    unixSockets: () => (iso().unixSockets === 'allow' ? 'allow' : 'block'),
    allowedDomains: () => iso().allowedDomains ?? [],
    testHosts,
    ...(options.relayScript ? { relayScript: options.relayScript } : {}),
  });
  const tty = new NodePtyBackend({ sandbox, logger: options.logger, ...(options.nodePty ? { candidates: options.nodePty } : {}) });
  return { tty, pipes: new ChildProcessBackend({ sandbox }), sandbox };
}
