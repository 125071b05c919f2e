import * as path from 'node:path';
import * as vscode from 'vscode';
import { childBaseEnvironment } from './core/process/baseEnvironment';
import { WorkspaceRegistry } from './core/policy/workspaces';
import { McpHttpHost } from './mcp/httpHost';
import { SERVER_NAME, bothEras } from './mcp/toolServer';
import { assembleServices } from './node/assembleServices';
import { GitWorkTree } from './node/gitWorkTree';
import { GitWorktrees } from './node/gitWorktrees';
import { WindowLiveness } from './core/discovery/liveness';
import { discoveryDir } from './node/discovery/discoveryFiles';
import { PingAnswerer, askSameWindows } from './node/discovery/sameWindow';
import { WindowPublisher } from './node/discovery/windowPublisher';
import { installBridgeLauncher } from './node/launcher/bridgeLauncher';
import { NodeWorkspaceFs } from './node/nodeWorkspaceFs';
import type { StateFolderChoice } from './node/stateFolder';
import { chooseStateFolder } from './node/stateFolder';
import { identify } from './node/survivors';
import { nodePtyCandidates } from './node/nodePtyLoader';
import { COMMANDS } from './vscode/commandIds';
import { endpointUrl, registerCommands } from './vscode/commands';
import { OutputLogger } from './vscode/log';
import { newRepositoryExposure } from './vscode/newRepositories';
import { registerMcpDefinitionProvider } from './vscode/mcpDefinitionProvider';
import { registerConnectAgent } from './vscode/connect/connectAgent';
import { registerAgentCommands } from './vscode/connect/agents';
import { AgentDirectory } from './vscode/agentDirectory';
import { AgentCredentials } from './vscode/agentCredentials';
import { registerPortAttributes } from './vscode/connect/portAttributes';
import { PortMemory } from './vscode/connect/portMemory';
import { registerTerminalEnvironment } from './vscode/connect/terminalEnvironment';
import { registerPanel } from './vscode/panel/panelView';
import type { PanelForTests } from './vscode/panel/panelView';
import { registerReview } from './vscode/review/registerReview';
import type { ReviewCommentsForTests } from './vscode/review/reviewComments';
import { registerReviewComments } from './vscode/review/reviewComments';
import { locateAfterWriteComment, registerAfterWriteReview } from './vscode/review/afterWriteReview';
import { registerCheckpointCommands } from './vscode/review/checkpoints';
import type { CheckpointsForTests } from './vscode/review/checkpoints';
import { registerWorkReview } from './vscode/review/workReview';
import { registerFrozenReview } from './vscode/review/frozenReview';
import { pullRequestExtensionOpener } from './vscode/review/pullRequestExtension';
import { FreezeGit } from './node/works/freezeGit';
import { WorkDelivery, deliverReviewedWork } from './node/works/deliver';
import type { WorkReviewForTests } from './vscode/review/workReview';
import { ProcessTerminals } from './vscode/processTerminals';
import { cacheSettings, settings } from './vscode/settings';
import { registerShowProcessTerminal } from './vscode/showProcessTerminal';
import { registerSteering } from './vscode/steering/registerSteering';
import { registerOpenWorkWorktree } from './vscode/steering/openWorkWorktree';
import { registerDiscardWork } from './vscode/steering/discardWork';
import { ServerStatusBar } from './vscode/statusBar';
import { registerInboxCommands } from './vscode/inboxCommands';
import { INBOX_TOKEN_KEY, TokenStore } from './vscode/tokenStore';
import { VsCodeWorkspaceFs } from './vscode/vscodeWorkspaceFs';
import { VsCodeWorkspaceSource } from './vscode/vscodeWorkspaceSource';
import { editorRipgrep } from './vscode/search/vscodeContentSearch';
import { RipgrepContentSearch } from './node/ripgrepContentSearch';
import { VsCodeLanguageFeatures } from './vscode/language/vscodeLanguageFeatures';
import { DocumentWatchers } from './vscode/documentWatchers';
import { StepTimes } from './core/util/stepTimes';
import { describeError, describeErrorWithStack } from './base/describeError';

/** What the extension exports to other extensions and to its tests. Never the token. */
export interface CodeSpaceApi {
  endpointUrl(): string | undefined;
  /**
   * Read only by the in-editor tests (test/integration/panel.test.ts): posts messages to the panel as its page
   * would and reads back its state and badge. In-process only; no agent reaches it.
   */
  readonly panelForTests: PanelForTests;
  /** Read only by the in-editor tests (test/integration/workReview.test.ts): the open work review sessions. */
  readonly workReviewForTests: WorkReviewForTests;
  /** Read only by the in-editor tests (test/integration/checkpoints.test.ts): the labels of the open checkpoint pick. */
  readonly checkpointsForTests: CheckpointsForTests;
  /** Read only by the in-editor tests (test/integration/reviewComments.test.ts): comments as the widget adds them, a reload's restore. */
  readonly reviewCommentsForTests: ReviewCommentsForTests;
  /**
   * Only in VS Code's test mode (test/integration/network.test.ts): names the network proxy resolves to a loopback
   * stand-in registry, for one port. Absent otherwise; no setting reaches it.
   */
  readonly networkTestHostsForTests?: Map<string, { address: string; port: number }>;
}

let shutdown: (() => Promise<void>) | undefined;

/** How long a new extension host waits for the owners of records on its folders to answer (askSameWindows). */
const SAME_WINDOW_ASK_MS = 12_000;
/** How long an owner gives its window to answer such a ping. */
const PING_ANSWER_MS = 5_000;
/** How often this window is asked whether it still answers, and how long a question may stay open. */
const WINDOW_ASK_INTERVAL_MS = 10_000;
const WINDOW_ASK_TIMEOUT_MS = 30_000;

function describe(err: unknown): string {
  return describeErrorWithStack(err);
}

/** Composition root: builds the pieces in order, starts the endpoint, registers the UI. */
export async function activate(context: vscode.ExtensionContext): Promise<CodeSpaceApi> {
  const activationStarted = performance.now();
  // Where activation spends its time, in the ready line of the log (`npm run bench:editor` reads it).
  const phases = new StepTimes(activationStarted);
  const phase = (name: string): void => phases.mark(name);

  const version = (context.extension.packageJSON as { version: string }).version;
  context.subscriptions.push(cacheSettings());
  const log = new OutputLogger();
  context.subscriptions.push(log);

  // Each token's verifier (its SHA-256, never the token) is kept in the global state, which is here at once: with
  // it the endpoint checks tokens from the moment it listens, while the tokens themselves are still on their way.
  const tokens = new TokenStore(context.secrets, (err) => log.error('[token] a token listener failed', describe(err)), undefined, context.globalState);
  // The /inbox API's own token: a second secret, so the /mcp token never opens /inbox and the reverse. Both are
  // read at once, while the services and the editor's side are built: each is a SecretStorage round trip to the
  // window, the slowest step of activation.
  const inboxTokens = new TokenStore(context.secrets, (err) => log.error('[token] an inbox token listener failed', describe(err)), INBOX_TOKEN_KEY, context.globalState);
  context.subscriptions.push(tokens, inboxTokens);
  // Each connected agent's own credential (Connect an Agent): only their SHA-256 digests in the global state.
  const agentCredentials = new AgentCredentials(context.secrets, context.globalState, (err) => log.error('[agents] a listener failed', describe(err)));
  const agentDirectory = new AgentDirectory(agentCredentials, log);
  context.subscriptions.push(agentDirectory);
  const loadingTokens = Promise.all([tokens.load(), inboxTokens.load()]);
  loadingTokens.catch(() => undefined); // awaited below, after the editor's side

  // A remote window's server may keep this window's previous extension host alive after a reload (it waits for the
  // old page to reconnect): ask the owner of any record with these very folders whether its window still answers.
  // One that does not withdraws its record, frees its port and lets its process host go; one that does is a
  // second window on these folders, and stays (README: "A reloaded remote window").
  const discoveryFolder = discoveryDir();
  const ownFolders = (): string[] => (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  for (const o of await askSameWindows({ dir: discoveryFolder, folders: ownFolders(), selfPid: process.pid, timeoutMs: SAME_WINDOW_ASK_MS })) {
    log.info(`[discovery] the extension host pid ${o.pid} on the same folders: ${o.answer === 'live' ? 'another window, which stays' : o.answer === 'gone' ? 'this window before its reload; it withdrew' : 'did not answer; both records stay'}`);
  }
  phase('same window');

  // The window's state (ledger, checkpoints, worktrees): in the folder VS Code gave, unless this window's previous
  // extension host, still alive, had it in another one and released it (src/node/stateFolder.ts).
  const self = identify(process.pid);
  const stateFolder: StateFolderChoice | undefined = context.storageUri && self ? chooseStateFolder({ vscodeDir: context.storageUri.fsPath, self, logger: log }) : undefined;
  const stateDir = stateFolder?.dir ?? (context.storageUri ?? context.globalStorageUri).fsPath;
  if (stateFolder && stateFolder.source !== 'own') log.info(`[state] this window's state is in ${stateDir} (${stateFolder.source === 'private' ? 'the folder VS Code gave is in use by another live window' : "taken over from this window's previous extension host"}); VS Code gave ${context.storageUri?.fsPath}`);
  phase('state folder');

  const testNetworkHosts = new Map<string, { address: string; port: number }>();
  const workspaces = new WorkspaceRegistry(new VsCodeWorkspaceSource());
  const workTree = new GitWorkTree({ log });
  const checkpoints = new FreezeGit({ log });
  const language = new VsCodeLanguageFeatures();
  context.subscriptions.push(language, new DocumentWatchers());
  const core = await assembleServices({
    workspaces,
    fs: new VsCodeWorkspaceFs(new NodeWorkspaceFs()),
    logger: log,
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
      allowedDomains: settings.execAllowedDomains,
      // In VS Code's test mode only (extensionTestsPath given), the in-editor tests map a name to their stand-in registry.
      ...(context.extensionMode === vscode.ExtensionMode.Test ? { testHosts: testNetworkHosts } : {}),
    },
    lifetime: 'vscode-window',
    // Agents' processes run in a process host beside the window and outlive a reload (README: "Agent processes").
    processHost: { script: path.join(context.extensionPath, 'dist', 'processHost.js'), ...(context.storageUri ? { vscodeStorageDir: context.storageUri.fsPath } : {}) },
    workBaseline: workTree,
    reviewBaseline: workTree,
    checkpoints,
    worktrees: new GitWorktrees({ dir: path.join(stateDir, 'worktrees'), log }),
    maxWorktreeWorks: settings.worksMaxWorktrees,
    maxWorktreeDiskMiB: settings.worksMaxWorktreeDiskMiB,
    workIsolation: settings.workIsolation,
    // VS Code's own node-pty first (built for this editor's runtime on every platform), the bundled copy as fallback.
    nodePty: nodePtyCandidates({ appRoot: vscode.env.appRoot, extensionRoot: context.extensionPath }),
    contentSearch: new RipgrepContentSearch(editorRipgrep()),
    language,
    diagnosticsSettleMs: settings.diagnosticsSettleMs,
    redaction: { enabled: settings.redactionEnabled, values: settings.redactionValues },
    disabledToolGroups: settings.toolsDisabledGroups,
    probeSandboxLater: true,
  });
  shutdown = core.shutdown;
  phase(`services (${core.startup})`);
  // The editor's side needs no token: it is built while the tokens are still on their way (see loadingTokens).
  const uiFrom = context.subscriptions.length;
  const terminals = new ProcessTerminals(core.supervisor, log);
  context.subscriptions.push(terminals, registerShowProcessTerminal(terminals, core.supervisor));
  // The editor's view of approvals and of what agents do: the panel, the diff review and the status bar read these.
  const approvals = core.approvals;
  const activity = core.runner;
  const workspaceRoot = (id: string): string | undefined => workspaces.list().find((w) => w.id === id)?.root;
  // A held patch of a work with worktrees binds the files of its worktree: those are the ones watched.
  const holdRoot = (id: string, approvalId?: string): string | undefined => {
    try {
      const workId = approvalId === undefined ? undefined : (approvals.stored(approvalId).request as { work_id?: unknown }).work_id;
      return workspaces.get(id, typeof workId === 'string' ? workId : undefined).root;
    } catch {
      return workspaceRoot(id);
    }
  };
  context.subscriptions.push(...registerReview({ approvals, activity, log, workspaceRoot: holdRoot }));
  const steering = core.steering;
  const workReview = registerWorkReview({ steering, tree: workTree, workspaceRoot, patchRecords: () => core.ledger.list(), log });
  // The reviews after the write, and where each one's files are: its work's worktree of the folder, or the folder.
  const afterWrite = {
    reviews: core.afterWrite,
    rootOf: (r: { workspace_id: string; work_id?: string }): string | undefined => {
      try {
        return workspaces.get(r.workspace_id, r.work_id).root;
      } catch {
        return undefined;
      }
    },
  };
  const reviewComments = registerReviewComments({
    approvals,
    log,
    state: context.workspaceState,
    // A work review's files, and the files of a work's review after the write.
    locateWork: (uri) => {
      const at = workReview.locate(uri) ?? locateAfterWriteComment(afterWrite, uri);
      return at ? { target: `work:${at.workId}`, path: at.path, side: at.side } : undefined;
    },
    sendToWork: async (workId, comments) => (await steering.queueReviewComments(workId, comments)).id,
  });
  context.subscriptions.push(...reviewComments.disposables);
  context.subscriptions.push(
    ...registerAfterWriteReview({
      ...afterWrite,
      steering,
      state: context.workspaceState,
      log,
    }),
  );
  context.subscriptions.push(...workReview.disposables, ...registerSteering({ steering, log }), registerOpenWorkWorktree(steering), registerDiscardWork(steering, log));
  const delivery = new WorkDelivery({ log, opener: pullRequestExtensionOpener() });
  context.subscriptions.push(...registerFrozenReview({ steering, freezer: core.freezer, checkpoints, deliver: (id) => deliverReviewedWork(steering, delivery, id), log }));
  const checkpointCommands = registerCheckpointCommands({ checkpoints: core.checkpoints, steering, locateWork: (uri) => workReview.locate(uri), log });
  context.subscriptions.push(...checkpointCommands.disposables);
  const panel = registerPanel({ extensionUri: context.extensionUri, approvals, activity, steering, reviewable: (w) => workTree.readable(w.baseline), agents: agentDirectory, log });
  context.subscriptions.push(panel);
  phase('editor UI');
  // The tokens' secrets for the process supervisor (no child gets them in its environment, no agent reads them in
  // output) and the log. Until they are registered, commands and reads of output wait (awaitSecrets).
  const secretsKnown = (async () => {
    for (const t of await loadingTokens) log.addSecret(t);
    context.subscriptions.push(core.supervisor.addSecret(tokens.get() as string), core.supervisor.addSecret(inboxTokens.get() as string));
    for (const store of [tokens, inboxTokens]) {
      context.subscriptions.push(store.onDidChange((t) => {
        log.addSecret(t);
        // Older tokens stay masked too; every registration is released when the extension deactivates.
        context.subscriptions.push(core.supervisor.addSecret(t));
      }));
    }
  })();
  core.supervisor.awaitSecrets(secretsKnown);
  /** Waits for the tokens; if they cannot be read, undoes what activation built and fails it. */
  const tokensOrUndo = async (): Promise<void> => {
    try {
      await secretsKnown;
    } catch (err) {
      for (const d of context.subscriptions.splice(uiFrom)) d.dispose();
      await core.shutdown().catch(() => undefined);
      shutdown = undefined;
      throw err;
    }
  };
  // Without a verifier (the first activation, or one before verifiers were kept) the endpoint waits for the tokens:
  // it could check no token before.
  const verified = tokens.expected() !== undefined && inboxTokens.expected() !== undefined;
  if (!verified) {
    await tokensOrUndo();
    phase('token');
  }

  const host = new McpHttpHost({
    ...bothEras({ ...core.serving, version }),
    token: () => tokens.expected(),
    agents: agentCredentials,
    logger: log,
    inbox: { steering: core.steering, token: () => inboxTokens.expected(), logger: log },
  });

  agentDirectory.attach(host);
  // Connecting agents: the discovery record (for the stdio bridge), the terminals' environment, a stable port.
  const ports = new PortMemory(context.workspaceState, host);
  const discovery = new WindowPublisher({
    server: host,
    dir: discoveryFolder,
    folders: ownFolders,
    token: () => tokens.get(),
    publishToken: settings.discoveryTokenFile,
    version,
    logger: log,
  });
  const bridge = installBridgeLauncher({
    installed: context.extensionMode === vscode.ExtensionMode.Production,
    extensionRoot: context.extensionUri.fsPath,
    extensionId: context.extension.id,
    log: (line) => log.info(line),
  });

  context.subscriptions.push(
    workspaces,
    host,
    discovery,
    ports,
    tokens.onDidChange(() => discovery.refresh()),
    // A token that replaced another (rotated here or in another window of the profile) ends the sessions opened
    // with the old one; the first load replaces none.
    tokens.onDidChange((_token, previous) => {
      if (previous === undefined) return;
      host.closeSessions().then(
        () => log.info('[token] the token changed: sessions opened with the previous one are closed'),
        (err: unknown) => log.error('[token] closing the sessions of the previous token failed', describe(err)),
      );
    }),
    vscode.workspace.onDidChangeWorkspaceFolders(() => discovery.refresh()),
    registerTerminalEnvironment(context.environmentVariableCollection, host, tokens),
    registerPortAttributes(host, (line) => log.info(line)),
    registerConnectAgent({ server: host, tokens, log, serverName: SERVER_NAME, bridge, credentials: agentCredentials }),
    ...registerAgentCommands(agentDirectory),
    new ServerStatusBar(host),
    ...registerCommands({ server: host, tokens, log, serverName: SERVER_NAME, preferredPort: () => ports.preferredPort() }),
    ...registerInboxCommands({ server: host, tokens: inboxTokens, log }),
    registerMcpDefinitionProvider(host, tokens, version),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (settings.affects(e, 'exec.isolation') || settings.affects(e, 'exec.network') || settings.affects(e, 'exec.unixSockets') || settings.affects(e, 'exec.allowedDomains') || settings.affects(e, 'exec.allowPackageRegistries')) {
        // Probe now for the new settings, so the log and workspace_info say at once what the next command gets.
        core.isolation.status().then(undefined, (err: unknown) => log.error('[sandbox] probing failed', describe(err)));
      }
      if (settings.affects(e, 'discovery.tokenFile')) discovery.refresh();
      // Connected sessions hear notifications/tools/list_changed when the served tools change.
      if (settings.affects(e, 'tools.disabledGroups')) core.toolGroups.refresh();
      if (settings.affects(e, 'server.port')) {
        vscode.commands.executeCommand(COMMANDS.restartServer).then(undefined, (err: unknown) => log.error('[activate] restarting the server failed', describe(err)));
      }
    }),
  );

  // While the window does not answer, the state folder is released for a newer extension host of the window
  // (src/node/stateFolder.ts); when it answers again it is taken back, unless a newer one took it. One step at a time.
  let stateStep: Promise<boolean> = Promise.resolve(true);
  const releaseState = (): Promise<boolean> =>
    (stateStep = stateStep.catch(() => true).then(async () => {
      if (!stateFolder || stateFolder.claim.isReleased) return true;
      await core.stateWrites.suspend();
      stateFolder.claim.release();
      log.info(`[state] released ${stateFolder.dir} for a newer extension host of this window`);
      return true;
    }));
  /** False when a newer extension host took the state meanwhile. */
  const reclaimState = (): Promise<boolean> =>
    (stateStep = stateStep.catch(() => true).then(() => {
      if (!stateFolder || !stateFolder.claim.isReleased) return true;
      if (!stateFolder.claim.reclaim()) return false;
      core.stateWrites.resume();
      log.info(`[state] took ${stateFolder.dir} back: this window answers again`);
      return true;
    }));
  // Whether this window still answers (a remote window's extension host can outlive its page). While it does not,
  // the endpoint stops (its record goes, the bridge finds the live window) and the process host may be taken over.
  const liveness = new WindowLiveness({ roundTrip: () => vscode.commands.executeCommand('setContext', 'codespace.windowAnswers', true), intervalMs: WINDOW_ASK_INTERVAL_MS, timeoutMs: WINDOW_ASK_TIMEOUT_MS });
  // Asked by a bridge's ping, and by the process host when another extension host of this window wants it.
  // The process host's regular question (`heartbeat`) only reports: the liveness loop decides the endpoint's state.
  const windowAnswers = async (heartbeat = false): Promise<boolean> => (await liveness.check(PING_ANSWER_MS, !heartbeat)) === 'live';
  core.processHost?.answerWindowQuestionsWith(windowAnswers);
  let stoppedForLoss = false;
  context.subscriptions.push(
    liveness,
    new PingAnswerer({ dir: discoveryFolder, recordFile: () => discovery.recordFile, windowAnswers, logger: log }),
    liveness.onDidChange((state) => {
      core.processHost?.windowLive(state === 'live');
      if (state === 'lost') {
        log.warn('[window] this window stopped answering (its page went away; a remote server keeps this extension host for a reconnection): stopping the endpoint and letting a newer extension host of the window take the agent processes and the state');
        stoppedForLoss = host.state.kind === 'running' || host.state.kind === 'starting';
        // The state folder is released before the record goes: a newer extension host told `gone` finds it free.
        releaseState()
          .then(undefined, (err: unknown) => log.error('[window] releasing the state folder failed', describe(err)))
          .then(() => host.stop())
          .then(undefined, (err: unknown) => log.error('[window] stopping the endpoint failed', describe(err)));
      } else {
        const restart = stoppedForLoss;
        stoppedForLoss = false;
        reclaimState()
          .then((ok) => {
            if (!ok) {
              log.warn('[window] this window answers again, but a newer extension host of the window has taken its state over: the endpoint stays stopped');
              return;
            }
            if (!restart) return;
            log.info('[window] this window answers again: starting the endpoint');
            return host.start(ports.preferredPort());
          })
          .then(undefined, (err: unknown) => log.error('[window] restarting the endpoint failed', describe(err)));
      }
    }),
  );

  phase('endpoint');
  try {
    await host.start(ports.preferredPort());
    phase('listen');
    // Read by `npm run bench:editor` (activation time) and the VSIX test.
    log.info(`[activate] ready in ${(performance.now() - activationStarted).toFixed(1)} ms (activate() to listening) on port ${host.port ?? '?'}; ${phases.toString()} ms${verified ? ' (tokens checked by their verifiers until they load)' : ''}`);
  } catch (err) {
    const message = describeError(err);
    log.error(`[activate] the MCP endpoint could not start: ${message}`);
    vscode.window.showErrorMessage(`CodeSpace: the MCP endpoint could not start: ${message}`, 'Show Log').then(
      (pick) => {
        if (pick) log.channel.show();
      },
      (e: unknown) => log.error('[activate] showing the error failed', describe(e)),
    );
  }
  // Listening on the verifiers: activation ends once the tokens are here (the discovery record, the terminals'
  // environment and VS Code's own MCP client hear of them through onDidChange).
  if (verified) await tokensOrUndo();
  // The sandbox probe starts a process: after the endpoint listens, so the first request does not wait for it (the log
  // and workspace_info still say what holds, and a first command probes at once if this has not finished).
  core.isolation.status().then(undefined, (err: unknown) => log.error('[sandbox] probing failed', describe(err)));
  return {
    endpointUrl: () => endpointUrl(host),
    panelForTests: panel.forTests,
    workReviewForTests: workReview.forTests,
    reviewCommentsForTests: reviewComments.forTests,
    checkpointsForTests: checkpointCommands.forTests,
    ...(context.extensionMode === vscode.ExtensionMode.Test ? { networkTestHostsForTests: testNetworkHosts } : {}),
  };
}

/** Ends every agent process before the extension host goes away (window close or reload). */
export async function deactivate(): Promise<void> {
  await shutdown?.();
  shutdown = undefined;
}
