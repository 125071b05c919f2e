import * as path from 'node:path';
import { OperationLedger } from '../kernel/ledger/operationLedger';
import { PatchService } from '../features/patches/common/patchService';
import type { PatchFaults } from '../features/patches/common/patchService';
import type { Logger } from '../base/logger';
import type { WorkspaceFs } from '../base/workspaceFs';
import type { WorkspaceRegistry } from '../kernel/workspaces';
import { SecretRedactor } from '../base/secretRedactor';
import { ProcessSupervisor } from '../features/processes/common/supervisor';
import type { AnyTool } from '../kernel/tool';
import { operationsOf } from '../kernel/tool';
import type { ProcessCapabilities } from '../features/processes/common/supervisor';
import type { CommandIsolation } from '../features/processes/common/commandIsolation';
import type { Limits } from '../kernel/limits';
import { ApprovalService, DEFAULT_APPROVAL_POLICY } from '../kernel/approvals/approvalService';
import type { ApprovalPolicy } from '../kernel/approvals/approvalService';
import type { ReviewMode } from '../kernel/approvals/holdPolicy';
import { AfterWriteReviews } from '../features/review/common/afterWriteReviews';
import type { WorkTreeRepo } from '../features/works/common/workTree';
import { OperationRunner } from '../kernel/runner/operationRunner';
import { ToolDispatcher } from '../kernel/dispatch';
import { CATALOGUE_GROUPS, assembleCatalogue } from './catalogue';
import { workspaceInfoTool } from '../features/files/common/workspaceInfo';
import { fileTools } from '../features/files/common/fileTools';
import { patchTools } from '../features/patches/common/patchTools';
import { approvalTools } from '../features/review/common/approvalTools';
import { processTools } from '../features/processes/common/tools/processTools';
import { steeringTools } from '../features/works/common/steeringTools';
import { editorTools } from '../features/editor/common/editorTools';
import { steeringHook } from '../features/works/common/steeringHook';
import { diagnosticsHook } from '../features/editor/common/diagnostics';
import { afterWriteHook } from '../features/review/common/afterWriteHook';
import { ToolGroups } from '../kernel/toolGroups';
import { ExecLog } from '../kernel/ledger/execLog';
import { LINE_TYPES } from '../kernel/ledger/schemas';
import { SharedJournal } from '../kernel/ledger/sharedJournal';
import { ChildProcessBackend } from '../features/processes/node/childProcessBackend';
import { FileJournal } from '../base/node/fileJournal';
import { NodePtyBackend } from '../features/processes/node/nodePtyBackend';
import type { NodePtyCandidate } from '../features/processes/node/nodePtyLoader';
import type { ProcessBackend } from '../features/processes/common/processBackend';
import { SurvivorRegistry, reapSurvivors } from '../features/processes/node/survivors';
import type { IsolationSettings } from '../features/processes/node/sandbox/commandSandbox';
import { CommandSandbox } from '../features/processes/node/sandbox/commandSandbox';
import type { ProcessHostSettings } from '../features/processes/node/processHost/hostBackends';
import { ProcessHostBackends, processHostStorageDir } from '../features/processes/node/processHost/hostBackends';
import { NO_ISOLATION } from '../features/processes/common/commandIsolation';
import { StepTimes } from '../base/stepTimes';
import type { WorkBaseline } from '../features/works/common/steering';
import { SteeringService } from '../features/works/common/steeringService';
import { WorkFreezer } from '../features/works/common/freeze';
import type { WorkCheckpoints } from '../features/works/common/workCheckpoint';
import { FreezeGit } from '../features/works/node/freezeGit';
import type { WorkIsolation } from '../features/works/common/steering';
import type { WorktreeFactory } from '../features/works/common/workTree';
import type { ContentSearch } from '../features/files/common/contentSearch';
import { NO_CONTENT_SEARCH } from '../features/files/common/contentSearch';
import type { LanguageFeatures } from '../features/editor/common/languageFeatures';
import { DiagnosticsFeed } from '../features/editor/common/diagnosticsFeed';
import { CheckpointService } from '../features/review/common/checkpointService';
import { FileBlobStore } from '../features/review/node/fileBlobStore';
import { describeErrorWithStack } from '../base/describeError';
import type { AgentResources } from '../kernel/agentResources';
import { steeringResources } from '../features/works/common/steeringResources';
import { completeWorkspaceId } from '../mcp/completions';

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
  /** The operator's environment changes, shown on held commands (default: none). */
  readonly envChanges?: () => Record<string, string | null>;
  readonly timeoutMs: () => number;
  /** The approval settings, read fresh on every call (default: patches `sensitive`, commands `off`). */
  readonly approvalPolicy?: () => ApprovalPolicy;
  /** `codespace.review.mode` of a workspace, read fresh per patch (default: `before`, review before the write). */
  readonly reviewMode?: (workspaceId: string) => ReviewMode;
  /** Reads a work's baseline, so a work's review after the write starts from it (absent: from the content before the first write). */
  readonly reviewBaseline?: Pick<WorkTreeRepo, 'readable' | 'baselineContent'>;
  readonly lifetime: string;
  readonly faults?: PatchFaults;
  /** Where the default terminal backend looks for node-pty, in order (see nodePtyLoader.ts). Default: its own resolution. */
  readonly nodePty?: readonly NodePtyCandidate[];
  /** Process backends (default: node-pty for terminals, child_process for pipes, both in the command sandbox). */
  readonly backends?: { tty: () => ProcessBackend; pipes: () => ProcessBackend };
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
  readonly sandboxedBackends?: (sandbox: CommandSandbox) => { tty: () => ProcessBackend; pipes: () => ProcessBackend };
  /** Who occupies a workspace (default: the supervisor's exclusive processes); tests stand in a process. */
  readonly occupant?: (workspaceId: string, workId?: string) => { process_id: string; command: readonly string[] } | undefined;
  /** Captures a workspace at work_open for the work review (absent in plain-Node hosts: works carry no baseline). */
  readonly workBaseline?: WorkBaseline;
  /** Checkpoints and reviewed commits of frozen works (default: git on PATH). */
  readonly checkpoints?: WorkCheckpoints;
  /** Creates the git worktrees of works with isolation "worktree" (absent: only shared works). */
  readonly worktrees?: WorktreeFactory;
  /** `codespace.works.maxWorktrees`, read at every work_open. */
  readonly maxWorktreeWorks?: () => number;
  /** `codespace.works.maxWorktreeDiskMiB`, read at every work_open. */
  readonly maxWorktreeDiskMiB?: () => number;
  /** `codespace.works.isolation`: the isolation of a work_open that names none. */
  readonly workIsolation?: () => WorkIsolation;
  /** Content search for the `search` tool (default: none, so `search` answers SEARCH_UNAVAILABLE). */
  readonly contentSearch?: ContentSearch;
  /** The editor's language features (the VS Code host); absent: the editor tools answer UNAVAILABLE. */
  readonly language?: LanguageFeatures;
  /** `codespace.diagnostics.settleMs`, read fresh per edit (default 0: edits are not followed for diagnostics). */
  readonly diagnosticsSettleMs?: () => number;
  /** Redaction of credentials from command output and search lines (default: on, no listed values). */
  readonly redaction?: { readonly enabled: () => boolean; readonly values: () => readonly string[] };
  /** `codespace.tools.disabledGroups`, read fresh (default: every group served). */
  readonly disabledToolGroups?: () => readonly unknown[];
  /** Bounds of the content kept for checkpoints (default: fileBlobStore.ts). */
  readonly checkpointStore?: { readonly maxBytes?: number; readonly maxBlobBytes?: number };
}

export interface AssembledServices {
  /** The workspaces it serves (a work_id resolves to the work's worktree once the works are open). */
  readonly workspaces: WorkspaceRegistry;
  readonly supervisor: ProcessSupervisor;
  /** The catalogue's tools, created by their modules, in tools/list order. */
  readonly tools: readonly AnyTool[];
  /**
   * A dispatcher over the catalogue and `extra` tools (a test's own), with the hooks and the operations registered as
   * the served one has them.
   */
  dispatcherWith(extra: readonly AnyTool[]): ToolDispatcher;
  /** What the MCP server takes (src/mcp/toolServer.ts ServedCore): the dispatcher, the modules' resources and prompts, the holds, the log. */
  readonly serving: { readonly dispatcher: ToolDispatcher; readonly resources: AgentResources; readonly holds: ApprovalService; readonly logger: Logger };
  /** The review after the write (`codespace.review.mode` `after`). */
  readonly afterWrite: AfterWriteReviews;
  /** Freezing, bound reviews and reviewed commits of works. */
  readonly freezer: WorkFreezer;
  /** Whether commands run in a sandbox, and with what network. */
  readonly isolation: CommandIsolation;
  /** Which tool groups the operator serves (`codespace.tools.disabledGroups`): refresh() when the setting changes. */
  readonly toolGroups: ToolGroups;
  /** The ledger's durable record of every command started. */
  readonly execLog: ExecLog;
  /** The process host's side in this extension host, when processes run there. */
  readonly processHost?: ProcessHostBackends;
  readonly approvals: ApprovalService;
  readonly runner: OperationRunner;
  /** tools/call over the whole catalogue, for the MCP adapter. */
  readonly dispatcher: ToolDispatcher;
  readonly ledger: OperationLedger;
  readonly patches: PatchService;
  /** Works and instructions (steering). */
  readonly steering: SteeringService;
  /** Works' checkpoints: rewind and redo. */
  readonly checkpoints: CheckpointService;
  /** Where the assembly spent its time, in ms per step (`ledger 4.1, survivors 0.3, …`), for the activation log line. */
  readonly startup: string;
  /** Ends every process (graceful first), then closes the ledger. */
  shutdown(): Promise<void>;
  /**
   * Stops and restarts writing the ledger, while another extension host of the workspace may take the state folder
   * over (stateFolder.ts): suspend resolves once nothing is being written.
   */
  readonly stateWrites: { suspend(): Promise<void>; resume(): void };
}

/**
 * Builds the core services on Node adapters: the file journal behind the operation ledger, node-pty and pipe
 * backends behind the process supervisor. Opens the ledger and settles operations an earlier run left pending.
 * Shared by the extension, the tests and the benchmarks, so all of them run the same assembly.
 */
export async function assembleServices(o: AssembleOptions): Promise<AssembledServices> {
  const steps = new StepTimes();
  // One ledger file for every record kind: patch operations, approval holds and commands each own a section.
  const file = new FileJournal({ directory: o.storageDir, fileName: 'operations.jsonl', logger: o.logger });
  const shared = new SharedJournal(file);
  const ledger = new OperationLedger({ journal: shared.section([LINE_TYPES.patch.type]), logger: o.logger, ...(o.ledger ?? {}) });
  const summary = await ledger.open();
  o.logger.info(`[ledger] ${summary.loaded} operation(s) loaded, ${summary.pending} pending, ${summary.rolled_off} rolled off`);
  steps.mark('ledger');
  const checkpointContent = new FileBlobStore({ directory: path.join(o.storageDir, 'checkpoints'), logger: o.logger, ...(o.checkpointStore ?? {}) });
  const patches = new PatchService({ fs: o.fs, workspaces: o.workspaces, ledger, logger: o.logger, checkpointContent, ...(o.faults ? { faults: o.faults } : {}) });

  // Children an earlier extension host left running (it crashed before ending them) go before any new one starts.
  const survivorsDir = path.join(o.storageDir, 'survivors');
  await reapSurvivors({ directory: survivorsDir, logger: o.logger });
  steps.mark('survivors');
  const sandbox = o.isolation ? new CommandSandbox({ ...o.isolation, logger: o.logger }) : undefined;
  // Probe at start, so the first command and workspace_info do not wait for it (and the log says what holds).
  if (sandbox && o.probeSandboxLater !== true) void sandbox.warmUp();
  const defaultBackends = (): { tty: () => ProcessBackend; pipes: () => ProcessBackend } => {
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
  const hostWith = (settings: NonNullable<AssembleOptions['processHost']>): ProcessHostBackends => {
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
  const approvals: ApprovalService = new ApprovalService({
    journal: shared.section([LINE_TYPES.hold.type]),
    logger: o.logger,
    policy: o.approvalPolicy ?? (() => DEFAULT_APPROVAL_POLICY),
    probe: (workspaceId, rel, workId) => patches.versionAt(o.workspaces.get(workspaceId, workId), rel),
    // A hold's content is planned again by the operation it holds (the runner's registry).
    replan: (hold) => runner.replan(hold),
  });
  const holds = await approvals.open();
  steps.mark('holds');
  o.logger.info(`[approvals] ${holds.loaded} hold(s) loaded, ${holds.pending} pending, ${holds.ambiguous} interrupted while resuming`);
  const runner = new OperationRunner({
    workspaces: o.workspaces,
    approvals,
    logger: o.logger,
    occupant:
      o.occupant ??
      ((id, workId) => {
        const occ = supervisor.occupant(id, workId);
        return occ ? { process_id: occ.process_id, command: occ.command } : undefined;
      }),
    processes: supervisor,
    ...(o.reviewMode ? { reviewMode: o.reviewMode } : {}),
  });
  const execLog = new ExecLog({ journal: shared.section([LINE_TYPES.exec.type]), logger: o.logger });
  const execs = await execLog.open();
  // Commands the process host kept running across the reload are not interrupted: they run on (or ended meanwhile).
  // Those a host ended as it exited with no window attached (or that ended by themselves then) read as it recorded.
  const recorded = host?.takeRecordedEnds();
  execLog.reattached([...adopted.map((p) => supervisor.status(p.record.process_id)), ...(recorded?.ends ?? [])]);
  if (recorded && recorded.ends.length > 0) {
    await execLog.flush();
    o.logger.info(`[exec-log] ${recorded.ends.length} command end(s) recorded by an earlier process host`);
  }
  recorded?.forget();
  steps.mark('exec log');
  if (execs.interrupted > 0) o.logger.info(`[exec-log] ${execs.interrupted} command(s) were running when the previous window ended`);
  const observing = runner.onEvent((e) => {
    if (e.type === 'operation.committed' || e.type === 'process.exited') execLog.observe(e);
  });
  const steering = new SteeringService({
    journal: shared.section([LINE_TYPES.work.type, LINE_TYPES.instruction.type]),
    logger: o.logger,
    workspaces: o.workspaces,
    ...(o.workBaseline ? { baseline: o.workBaseline } : {}),
    ...(o.worktrees ? { worktrees: o.worktrees } : {}),
    ...(o.maxWorktreeWorks ? { maxWorktreeWorks: o.maxWorktreeWorks } : {}),
    ...(o.maxWorktreeDiskMiB ? { maxWorktreeDiskMiB: o.maxWorktreeDiskMiB } : {}),
    ...(o.workIsolation ? { defaultIsolation: o.workIsolation } : {}),
    sources: { patches: () => ledger.list(), execs: () => execLog.list() },
  });
  const steer = await steering.open();
  steps.mark('steering');
  // From here a tool's work_id resolves to the work's worktree (WorkspaceRegistry.get).
  o.workspaces.setWorkRoots(steering);
  // Settled once works resolve: a patch a crash cut off in a work's worktree is checked there, not in the folder.
  if (summary.pending > 0) await patches.reconcile();
  o.logger.info(`[steering] ${steer.works} work(s) loaded, ${steer.open} open, ${steer.queued} instruction(s) queued, ${steer.claimed} claimed`);
  const freezer = new WorkFreezer({ steering, checkpoints: o.checkpoints ?? new FreezeGit({ log: o.logger }), workspaces: o.workspaces, logger: o.logger });
  const checkpoints = new CheckpointService({ ledger, patches, workspaces: o.workspaces, blobs: checkpointContent, steering, logger: o.logger });
  const diagnosticsSettleMs = o.diagnosticsSettleMs ?? (() => 0);
  const diagnosticsFeed = new DiagnosticsFeed({
    language: o.language,
    settleMs: diagnosticsSettleMs,
    versionOf: async (workspaceId, rel) => {
      const v = await patches.versionAt(o.workspaces.get(workspaceId), rel);
      return v === 'directory' ? undefined : v;
    },
    logger: o.logger,
  });
  const reviewBaseline = o.reviewBaseline;
  const afterWrite = new AfterWriteReviews({
    workspaces: o.workspaces,
    fs: o.fs,
    patches,
    mode: o.reviewMode ?? (() => 'before'),
    logger: o.logger,
    ...(reviewBaseline
      ? {
          baseline: async (workspaceId: string, workId: string, rel: string) => {
            const captured = steering.work(workId)?.baseline;
            if (!reviewBaseline.readable(captured)) return undefined;
            return (await reviewBaseline.baselineContent(o.workspaces.get(workspaceId, workId).root, captured as string, rel)) ?? null;
          },
        }
      : {}),
  });
  const isolation = sandbox ?? NO_ISOLATION;
  const search = o.contentSearch ?? NO_CONTENT_SEARCH;
  const toolGroups = new ToolGroups(CATALOGUE_GROUPS, o.disabledToolGroups, (err) => o.logger.error('[tools] a tool-list listener failed', describeErrorWithStack(err)));
  const engine = search.engine();
  if (engine.available) o.logger.info(`[search] ripgrep (${engine.source}) at ${engine.path ?? '?'}`);
  else o.logger.warn(`[search] content search unavailable: ${engine.reason ?? 'no ripgrep'}`);
  steps.mark('services');
  // Each module creates its tools with exactly what they use; the catalogue orders them.
  const { workspaces, fs, logger, limits } = o;
  const processCapabilities = (): ProcessCapabilities => supervisor.capabilities();
  const tools = assembleCatalogue([
    workspaceInfoTool.create({ workspaces, toolGroups, limits, processCapabilities, approvals, isolation }),
    ...fileTools({ workspaces, fs, limits, search, redactor }),
    ...patchTools({ workspaces, fs, logger, patches, approvals, afterWrite, language: o.language, diagnosticsFeed, runner }),
    ...approvalTools({ runner, approvals }),
    ...processTools({ workspaces, fs, processes: supervisor, execLog, exec: { env: o.env, envChanges: o.envChanges ?? (() => ({})), timeoutMs: o.timeoutMs }, processCapabilities, runner }),
    ...steeringTools({ steering, freezer }),
    ...editorTools({ workspaces, fs, logger, language: o.language, diagnosticsFeed, diagnosticsSettleMs, runner }),
  ]);
  const dispatcherWith = (extra: readonly AnyTool[]): ToolDispatcher => {
    const dispatcher = new ToolDispatcher([...tools, ...extra], toolGroups, o.logger);
    // The runner's registry is the served tools' operations: calls route to them by name and holds of them resume.
    runner.register(operationsOf(dispatcher.tools));
    // What every answer carries besides its result, in this order: coordination, diagnostics_update, review_update.
    dispatcher.addHook(steeringHook(steering, approvals));
    dispatcher.addHook(diagnosticsHook(diagnosticsFeed));
    dispatcher.addHook(afterWriteHook(afterWrite, steering));
    return dispatcher;
  };
  const dispatcher = dispatcherWith([]);
  steps.mark('tools');
  return {
    workspaces,
    supervisor,
    tools,
    dispatcherWith,
    serving: { dispatcher, resources: steeringResources(steering, (prefix) => completeWorkspaceId(dispatcher, prefix)), holds: approvals, logger: o.logger },
    afterWrite,
    freezer,
    isolation,
    toolGroups,
    execLog,
    ...(host ? { processHost: host } : {}),
    ledger,
    patches,
    approvals,
    runner,
    dispatcher,
    steering,
    checkpoints,
    startup: steps.toString(),
    stateWrites: {
      async suspend() {
        // What the command log and the works hold back is written first, then nothing more until resume().
        await execLog.flush().catch(() => undefined);
        await steering.flush().catch(() => undefined);
        await file.suspend();
      },
      resume: () => file.resume(),
    },
    async shutdown() {
      diagnosticsFeed.dispose();
      afterWrite.dispose();
      // Processes in the process host are let go, not ended: the next extension host of this window takes them back.
      await supervisor.disposeAll(host ? { keep: (id) => host.hosted(id) } : {});
      host?.detach();
      await sandbox?.close();
      watching.dispose();
      survivors.dispose();
      await execLog.flush();
      observing.dispose();
      execLog.dispose();
      await steering.flush();
      steering.dispose();
      runner.dispose();
      toolGroups.dispose();
      approvals.dispose();
      ledger.dispose();
      await shared.close();
    },
  };
}
