import * as path from 'node:path';
import { OperationLedger } from '../kernel/ledger/operationLedger';
import { PatchService } from '../features/patches/common/patchService';
import type { PatchFaults } from '../features/patches/common/patchService';
import type { Logger } from '../base/logger';
import type { WorkspaceFs } from '../base/workspaceFs';
import type { WorkspaceRegistry } from '../kernel/workspaces';
import type { ProcessSupervisor } from '../features/processes/common/supervisor';
import type { AnyTool } from '../kernel/tool';
import { operationsOf } from '../kernel/tool';
import type { ProcessCapabilities } from '../features/processes/common/supervisor';
import type { CommandIsolation } from '../features/processes/common/commandIsolation';
import { ApprovalService, DEFAULT_APPROVAL_POLICY } from '../kernel/approvals/approvalService';
import type { ApprovalPolicy } from '../kernel/approvals/approvalService';
import type { ReviewMode } from '../kernel/approvals/holdPolicy';
import type { WorkTreeRepo } from '../features/works/common/workTree';
import { OperationRunner } from '../kernel/runner/operationRunner';
import { ToolDispatcher } from '../kernel/dispatch';
import { CATALOGUE_GROUPS, assembleCatalogue } from './catalogue';
import { workspaceInfoTool } from '../features/files/common/workspaceInfo';
import { fileTools } from '../features/files/common/fileTools';
import { patchTools } from '../features/patches/common/patchTools';
import { processTools } from '../features/processes/common/tools/processTools';
import { ToolGroups } from '../kernel/toolGroups';
import { ExecLog } from '../kernel/ledger/execLog';
import { LINE_TYPES } from '../kernel/ledger/schemas';
import { SharedJournal } from '../kernel/ledger/sharedJournal';
import { FileJournal } from '../base/node/fileJournal';
import type { ProcessHostBackends } from '../features/processes/node/processHost/hostBackends';
import { StepTimes } from '../base/stepTimes';
import type { WorkBaseline } from '../features/works/common/steering';
import type { WorkCheckpoints } from '../features/works/common/workCheckpoint';
import type { WorkIsolation } from '../features/works/common/steering';
import type { WorktreeFactory } from '../features/works/common/workTree';
import type { ContentSearch } from '../features/files/common/contentSearch';
import { NO_CONTENT_SEARCH } from '../features/files/common/contentSearch';
import type { LanguageFeatures } from '../features/editor/common/languageFeatures';
import { FileBlobStore } from '../features/review/node/fileBlobStore';
import { describeErrorWithStack } from '../base/describeError';
import { AsyncDisposableStore, flushThenDispose } from '../base/disposable';
import { assembleProcesses } from '../features/processes/node/assembleProcesses';
import type { ProcessesOptions } from '../features/processes/node/assembleProcesses';
import { assembleWorks } from '../features/works/node/assembleWorks';
import { assembleReview } from '../features/review/common/assembleReview';
import { assembleEditor } from '../features/editor/common/assembleEditor';
import { assembleTasks } from '../features/tasks/common/assembleTasks';
import type { TasksPort } from '../features/tasks/common/tasksPort';
import { assembleDebug } from '../features/debug/common/assembleDebug';
import type { DebugPort } from '../features/debug/common/debugPort';
import type { AfterWriteReviews } from '../features/review/common/afterWriteReviews';
import type { CheckpointService } from '../features/review/common/checkpointService';
import type { SteeringService } from '../features/works/common/steeringService';
import type { WorkFreezer } from '../features/works/common/freeze';
import type { AgentResources } from '../kernel/agentResources';
import { completeWorkspaceId } from '../mcp/completions';

/** What the assembly takes: the processes module's options (processes' storage, backends, sandbox, process host) and the rest. */
export interface AssembleOptions extends ProcessesOptions {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
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
  readonly faults?: PatchFaults;
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
  /** The editor's tasks (the VS Code host); absent: the task tools answer UNAVAILABLE. */
  readonly tasks?: TasksPort;
  /** The editor's debugger (the VS Code host); absent: the debug tools answer UNAVAILABLE. */
  readonly debug?: DebugPort;
  /** `codespace.diagnostics.settleMs`, read fresh per edit (default 0: edits are not followed for diagnostics). */
  readonly diagnosticsSettleMs?: () => number;
  /** `codespace.tools.disabledGroups`, read fresh (default: every group served). */
  readonly disabledToolGroups?: () => readonly unknown[];
  /** `codespace.tools.enabledGroups` (user settings), read fresh (default: no group served only on request is on). */
  readonly enabledToolGroups?: () => readonly unknown[];
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
  // What the assembly makes is released by one store, the last made first (each module adds its release where what
  // it needs still exists): the file closes last, the processes end first.
  const owned = new AsyncDisposableStore((err) => o.logger.error('[shutdown] a step failed', describeErrorWithStack(err)));
  // One ledger file for every record kind: patch operations, approval holds, commands and works each own a section.
  const file = new FileJournal({ directory: o.storageDir, fileName: 'operations.jsonl', logger: o.logger });
  const shared = new SharedJournal(file);
  owned.add(() => shared.close());
  const ledger = owned.add(new OperationLedger({ journal: shared.section([LINE_TYPES.patch.type]), logger: o.logger, ...(o.ledger ?? {}) }));
  const summary = await ledger.open();
  o.logger.info(`[ledger] ${summary.loaded} operation(s) loaded, ${summary.pending} pending, ${summary.rolled_off} rolled off`);
  steps.mark('ledger');
  const checkpointContent = new FileBlobStore({ directory: path.join(o.storageDir, 'checkpoints'), logger: o.logger, ...(o.checkpointStore ?? {}) });
  const patches = new PatchService({ fs: o.fs, workspaces: o.workspaces, ledger, logger: o.logger, checkpointContent, ...(o.faults ? { faults: o.faults } : {}) });

  const processes = await assembleProcesses(o, steps);
  const { supervisor, host, redactor, isolation } = processes;
  const approvals: ApprovalService = owned.add(
    new ApprovalService({
      journal: shared.section([LINE_TYPES.hold.type]),
      logger: o.logger,
      policy: o.approvalPolicy ?? (() => DEFAULT_APPROVAL_POLICY),
      probe: (workspaceId, rel, workId) => patches.versionAt(o.workspaces.get(workspaceId, workId), rel),
      // A hold's content is planned again by the operation it holds (the runner's registry).
      replan: (hold) => runner.replan(hold),
    }),
  );
  const holds = await approvals.open();
  steps.mark('holds');
  o.logger.info(`[approvals] ${holds.loaded} hold(s) loaded, ${holds.pending} pending, ${holds.ambiguous} interrupted while resuming`);
  const toolGroups = owned.add(new ToolGroups(CATALOGUE_GROUPS, o.disabledToolGroups, (err) => o.logger.error('[tools] a tool-list listener failed', describeErrorWithStack(err)), o.enabledToolGroups));
  const runner = owned.add(
    new OperationRunner({
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
    }),
  );
  const execLog = new ExecLog({ journal: shared.section([LINE_TYPES.exec.type]), logger: o.logger });
  owned.add(flushThenDispose(execLog));
  const execs = await execLog.open();
  // Commands the process host kept running across the reload are not interrupted: they run on (or ended meanwhile).
  // Those a host ended as it exited with no window attached (or that ended by themselves then) read as it recorded.
  const recorded = host?.takeRecordedEnds();
  execLog.reattached([...processes.adopted.map((p) => supervisor.status(p.record.process_id)), ...(recorded?.ends ?? [])]);
  if (recorded && recorded.ends.length > 0) {
    await execLog.flush();
    o.logger.info(`[exec-log] ${recorded.ends.length} command end(s) recorded by an earlier process host`);
  }
  recorded?.forget();
  steps.mark('exec log');
  if (execs.interrupted > 0) o.logger.info(`[exec-log] ${execs.interrupted} command(s) were running when the previous window ended`);
  owned.add(
    runner.onEvent((e) => {
      if (e.type === 'operation.committed' || e.type === 'process.exited') execLog.observe(e);
    }),
  );
  const works = await assembleWorks(
    {
      journal: shared.section([LINE_TYPES.work.type, LINE_TYPES.instruction.type]),
      logger: o.logger,
      workspaces: o.workspaces,
      ...(o.workBaseline ? { baseline: o.workBaseline } : {}),
      ...(o.worktrees ? { worktrees: o.worktrees } : {}),
      ...(o.maxWorktreeWorks ? { maxWorktreeWorks: o.maxWorktreeWorks } : {}),
      ...(o.maxWorktreeDiskMiB ? { maxWorktreeDiskMiB: o.maxWorktreeDiskMiB } : {}),
      ...(o.workIsolation ? { defaultIsolation: o.workIsolation } : {}),
      sources: { patches: () => ledger.list(), execs: () => execLog.list() },
      ...(o.checkpoints ? { checkpoints: o.checkpoints } : {}),
      approvals,
    },
    owned,
  );
  const { steering } = works;
  steps.mark('steering');
  // From here a tool's work_id resolves to the work's worktree (WorkspaceRegistry.get).
  o.workspaces.setWorkRoots(steering);
  // Settled once works resolve: a patch a crash cut off in a work's worktree is checked there, not in the folder.
  if (summary.pending > 0) await patches.reconcile();
  // Every process ends (or is let go to the process host) before the works, the command log and the ledger close.
  owned.add(() => processes.stop());
  const { workspaces, fs, logger, limits } = o;
  const reviewBaseline = o.reviewBaseline;
  const review = assembleReview(
    {
      afterWrite: {
        workspaces,
        fs,
        patches,
        mode: o.reviewMode ?? (() => 'before'),
        logger,
        ...(reviewBaseline
          ? {
              baseline: async (workspaceId: string, workId: string, rel: string) => {
                const captured = steering.work(workId)?.baseline;
                if (!reviewBaseline.readable(captured)) return undefined;
                return (await reviewBaseline.baselineContent(workspaces.get(workspaceId, workId).root, captured as string, rel)) ?? null;
              },
            }
          : {}),
      },
      checkpoints: { ledger, patches, workspaces, blobs: checkpointContent, logger },
      steering,
      runner,
      approvals,
    },
    owned,
  );
  const { afterWrite } = review;
  const diagnosticsSettleMs = o.diagnosticsSettleMs ?? (() => 0);
  const editor = assembleEditor(
    {
      workspaces,
      fs,
      logger,
      language: o.language,
      diagnosticsSettleMs,
      runner,
      versionOf: async (workspaceId, rel) => {
        const v = await patches.versionAt(workspaces.get(workspaceId), rel);
        return v === 'directory' ? undefined : v;
      },
    },
    owned,
  );
  const { diagnosticsFeed } = editor;
  const tasks = assembleTasks({ workspaces, fs, logger, tasks: o.tasks, runner, processes: supervisor });
  const debug = assembleDebug({ workspaces, fs, debug: o.debug, runner, served: () => toolGroups.offReason('debug_start') === undefined }, owned);
  const search = o.contentSearch ?? NO_CONTENT_SEARCH;
  const engine = search.engine();
  if (engine.available) o.logger.info(`[search] ripgrep (${engine.source}) at ${engine.path ?? '?'}`);
  else o.logger.warn(`[search] content search unavailable: ${engine.reason ?? 'no ripgrep'}`);
  steps.mark('services');
  // Each module creates its tools with exactly what they use; the catalogue orders them.
  const processCapabilities = (): ProcessCapabilities => supervisor.capabilities();
  const tools = assembleCatalogue([
    workspaceInfoTool.create({ workspaces, toolGroups, limits, processCapabilities, approvals, isolation, debugger: () => o.debug !== undefined && toolGroups.offReason('debug_start') === undefined }),
    ...fileTools({ workspaces, fs, limits, search, redactor }),
    ...patchTools({ workspaces, fs, logger, patches, approvals, afterWrite, language: o.language, diagnosticsFeed, runner }),
    ...review.tools,
    ...processTools({ workspaces, fs, processes: supervisor, execLog, exec: { env: o.env, envChanges: o.envChanges ?? (() => ({})), timeoutMs: o.timeoutMs }, processCapabilities, runner }),
    ...works.tools,
    ...editor.tools,
    ...tasks.tools,
    ...debug.tools,
  ]);
  const dispatcherWith = (extra: readonly AnyTool[]): ToolDispatcher => {
    const dispatcher = new ToolDispatcher([...tools, ...extra], toolGroups, o.logger);
    // The runner's registry is the served tools' operations: calls route to them by name and holds of them resume.
    runner.register(operationsOf(dispatcher.tools));
    // What every answer carries besides its result, in this order: coordination, diagnostics_update, review_update.
    dispatcher.addHook(works.hook);
    dispatcher.addHook(editor.hook);
    dispatcher.addHook(review.hook);
    return dispatcher;
  };
  const dispatcher = dispatcherWith([]);
  steps.mark('tools');
  return {
    workspaces,
    supervisor,
    tools,
    dispatcherWith,
    serving: { dispatcher, resources: works.resources((prefix) => completeWorkspaceId(dispatcher, prefix)), holds: approvals, logger: o.logger },
    afterWrite,
    freezer: works.freezer,
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
    checkpoints: review.checkpoints,
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
    shutdown: () => owned.dispose(),
  };
}
