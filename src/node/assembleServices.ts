import * as path from 'node:path';
import { OperationLedger } from '../core/ledger/operationLedger';
import { PatchService } from '../core/patch/patchService';
import type { PatchFaults } from '../core/patch/patchService';
import type { Logger } from '../core/ports/logger';
import type { WorkspaceFs } from '../core/ports/workspaceFs';
import type { WorkspaceRegistry } from '../core/policy/workspaces';
import type { ProcessServices } from '../core/process/services';
import { ProcessSupervisor } from '../core/process/supervisor';
import type { Limits } from '../core/tools/tool';
import { ChildProcessBackend } from './childProcessBackend';
import { FileJournal } from './fileJournal';
import { NodePtyBackend } from './nodePtyBackend';
import { SurvivorRegistry, reapSurvivors } from './survivors';

export interface AssembleOptions {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  readonly limits: () => Limits;
  /** Absolute folder for durable state (the operation ledger). */
  readonly storageDir: string;
  readonly ledger?: { maxRecords: number; maxAgeMs: number };
  /** Children's base environment; the supervisor removes our secrets from it. */
  readonly env: () => Record<string, string>;
  readonly timeoutMs: () => number;
  readonly lifetime: string;
  readonly faults?: PatchFaults;
}

export interface AssembledServices {
  readonly services: ProcessServices;
  readonly supervisor: ProcessSupervisor;
  readonly ledger: OperationLedger;
  readonly patches: PatchService;
  /** Ends every process (graceful first), then closes the ledger. */
  shutdown(): Promise<void>;
}

/**
 * Builds the core services on Node adapters: the file journal behind the operation ledger, node-pty and pipe
 * backends behind the process supervisor. Opens the ledger and settles operations an earlier run left pending.
 * Shared by the extension, the tests and the benchmarks, so all of them run the same assembly.
 */
export async function assembleServices(o: AssembleOptions): Promise<AssembledServices> {
  const journal = new FileJournal({ directory: o.storageDir, fileName: 'operations.jsonl', logger: o.logger });
  const ledger = new OperationLedger({ journal, logger: o.logger, ...(o.ledger ?? {}) });
  const summary = await ledger.open();
  o.logger.info(`[ledger] ${summary.loaded} operation(s) loaded, ${summary.pending} pending, ${summary.rolled_off} rolled off`);
  const patches = new PatchService({ fs: o.fs, workspaces: o.workspaces, ledger, logger: o.logger, ...(o.faults ? { faults: o.faults } : {}) });
  if (summary.pending > 0) await patches.reconcile();

  // Children an earlier extension host left running (it crashed before ending them) go before any new one starts.
  const survivorsDir = path.join(o.storageDir, 'survivors');
  await reapSurvivors({ directory: survivorsDir, logger: o.logger });
  const supervisor = new ProcessSupervisor({
    backends: { tty: () => new NodePtyBackend(), pipes: () => new ChildProcessBackend() },
    limits: o.limits,
    logger: o.logger,
    lifetime: o.lifetime,
  });
  const survivors = new SurvivorRegistry({ directory: survivorsDir, logger: o.logger });
  const watching = survivors.watch(supervisor);
  const services: ProcessServices = {
    workspaces: o.workspaces,
    fs: o.fs,
    logger: o.logger,
    limits: o.limits,
    patches,
    processes: supervisor,
    exec: { env: o.env, timeoutMs: o.timeoutMs },
    processCapabilities: () => supervisor.capabilities(),
    occupant: (id) => {
      const occ = supervisor.occupant(id);
      return occ ? { process_id: occ.process_id, command: occ.command } : undefined;
    },
  };
  return {
    services,
    supervisor,
    ledger,
    patches,
    async shutdown() {
      await supervisor.disposeAll();
      watching.dispose();
      survivors.dispose();
      ledger.dispose();
      await journal.close();
    },
  };
}
