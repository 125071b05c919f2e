import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Disposable } from '../../base/disposable';
import { describeErrorWithStack } from '../../base/describeError';
import { childBaseEnvironment } from '../../features/processes';
import type { WorkspaceRegistry } from '../../kernel/workspaces';
import type { AssembleOptions, AssembledServices } from '../../app/assembleServices';
import type { GitWorkBaseline } from '../../features/works/node';
import { GitWorktreeFactory } from '../../features/works/node';
import { NodeWorkspaceFs } from '../../kernel/node/nodeWorkspaceFs';
import { nodePtyCandidates } from '../../features/processes/node';
import { RipgrepContentSearch } from '../../features/files/node';
import type { FreezeGit } from '../../features/works/node';
import { COMMANDS } from '../../kernel/vscode/commandIds';
import type { VsCodeLanguageFeatures } from '../../features/editor/vscode';
import { VsCodeTasks } from '../../features/tasks/vscode';
import type { DebugPort } from '../../features/debug';
import type { OutputLogger } from '../../kernel/vscode/log';
import { newRepositoryExposure } from '../../features/processes/vscode';
import { editorRipgrep } from '../../features/files/vscode';
import { settings } from '../../kernel/vscode/settings';
import { VsCodeWorkspaceFs } from '../vscodeWorkspaceFs';
import { processSettings } from '../../features/processes/vscode';

/** What the services are built on that is not a setting: the window's adapters and where its state is. */
export interface ServiceParts {
  readonly context: vscode.ExtensionContext;
  readonly log: OutputLogger;
  readonly workspaces: WorkspaceRegistry;
  readonly stateDir: string;
  readonly workTree: GitWorkBaseline;
  readonly checkpoints: FreezeGit;
  readonly language: VsCodeLanguageFeatures;
  /** The editor's debugger (the debug tools). */
  readonly debug: DebugPort;
  /** In VS Code's test mode only: names the network proxy resolves to the in-editor tests' stand-in registry. */
  readonly testNetworkHosts: Map<string, { address: string; port: number }>;
}

/** The services' options: each setting mapped to the option it drives (read at each use, so a change applies next). */
export function serviceOptions(p: ServiceParts): AssembleOptions {
  const { context, workspaces, stateDir, workTree } = p;
  return {
    workspaces,
    fs: new VsCodeWorkspaceFs(new NodeWorkspaceFs()),
    logger: p.log,
    limits: settings.limits,
    storageDir: stateDir,
    ledger: settings.ledger(),
    env: () => childBaseEnvironment(process.env, settings.execEnv()),
    envChanges: settings.execEnv,
    timeoutMs: settings.execTimeoutMs,
    approvalPolicy: settings.approvals,
    reviewMode: (id) => {
      const root = workspaces.list().find((w) => w.id === id)?.root;
      return settings.reviewMode(vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file' && f.uri.fsPath === root));
    },
    isolation: {
      mode: settings.execIsolation,
      network: settings.execNetwork,
      unixSockets: settings.execUnixSockets,
      gitWrites: settings.execGitWrites,
      incompleteProtection: settings.execIncompleteProtection,
      newRepositories: newRepositoryExposure,
      maxProcesses: settings.execMaxProcesses,
      allowedDomains: processSettings.execAllowedDomains,
      // In VS Code's test mode only (extensionTestsPath given), the in-editor tests map a name to their stand-in registry.
      ...(context.extensionMode === vscode.ExtensionMode.Test ? { testHosts: p.testNetworkHosts } : {}),
    },
    lifetime: 'vscode-window',
    // Agents' processes run in a process host beside the window and outlive a reload (README: "Agent processes").
    processHost: { script: path.join(context.extensionPath, 'dist', 'processHost.js'), ...(context.storageUri ? { vscodeStorageDir: context.storageUri.fsPath } : {}) },
    workBaseline: workTree,
    reviewBaseline: workTree,
    checkpoints: p.checkpoints,
    worktrees: new GitWorktreeFactory({ dir: path.join(stateDir, 'worktrees'), log: p.log }),
    maxWorktreeWorks: settings.worksMaxWorktrees,
    maxWorktreeDiskMiB: settings.worksMaxWorktreeDiskMiB,
    workIsolation: settings.workIsolation,
    // VS Code's own node-pty first (built for this editor's runtime on every platform), the bundled copy as fallback.
    nodePty: nodePtyCandidates({ appRoot: vscode.env.appRoot, extensionRoot: context.extensionPath }),
    contentSearch: new RipgrepContentSearch(editorRipgrep()),
    language: p.language,
    tasks: new VsCodeTasks((paths) => p.language.diagnostics(paths)),
    debug: p.debug,
    diagnosticsSettleMs: settings.diagnosticsSettleMs,
    redaction: { enabled: settings.redactionEnabled, values: settings.redactionValues },
    disabledToolGroups: settings.toolsDisabledGroups,
    enabledToolGroups: settings.toolsEnabledGroups,
    probeSandboxLater: true,
  };
}

/** The settings whose change makes the sandbox probe again. */
const SANDBOX_SETTINGS = ['exec.isolation', 'exec.network', 'exec.unixSockets', 'exec.allowedDomains', 'exec.allowPackageRegistries'];

/** Probes the sandbox, so the log and workspace_info say what the next command gets; a failure is logged. */
export function probeSandbox(core: Pick<AssembledServices, 'isolation' | 'toolGroups'>, log: OutputLogger): void {
  core.isolation.status().then(undefined, (err: unknown) => log.error('[sandbox] probing failed', describeErrorWithStack(err)));
}

/** The reactions to settings read once rather than at each use. */
export function reactToSettings(core: Pick<AssembledServices, 'isolation' | 'toolGroups'>, discovery: { refresh(): void }, log: OutputLogger): Disposable {
  return vscode.workspace.onDidChangeConfiguration((e) => {
    // Probe now for the new settings, so the log and workspace_info say at once what the next command gets.
    if (SANDBOX_SETTINGS.some((s) => settings.affects(e, s))) probeSandbox(core, log);
    if (settings.affects(e, 'discovery.tokenFile')) discovery.refresh();
    // Connected sessions hear notifications/tools/list_changed when the served tools change.
    if (settings.affects(e, 'tools.disabledGroups') || settings.affects(e, 'tools.enabledGroups')) core.toolGroups.refresh();
    if (settings.affects(e, 'server.port')) {
      vscode.commands.executeCommand(COMMANDS.restartServer).then(undefined, (err: unknown) => log.error('[activate] restarting the server failed', describeErrorWithStack(err)));
    }
  });
}
