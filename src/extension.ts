import * as vscode from 'vscode';
import { WorkspaceRegistry } from './kernel/workspaces';
import { assembleServices } from './app/assembleServices';
import { GitWorkBaseline } from './features/works/node/gitWorkBaseline';
import { FreezeGit } from './features/works/node/freezeGit';
import { StepTimes } from './base/stepTimes';
import { describeError, describeErrorWithStack } from './base/describeError';
import { endpointUrl } from './kernel/serverControl';
import { OutputLogger } from './kernel/vscode/log';
import { cacheSettings } from './kernel/vscode/settings';
import { VsCodeWorkspaceSource } from './vscode/vscodeWorkspaceSource';
import { VsCodeLanguageFeatures } from './features/editor/vscode/vscodeLanguageFeatures';
import { DocumentWatchers } from './features/editor/vscode/documentWatchers';
import { VsCodeDebug } from './features/debug/vscode';
import { maskTokens, openCredentials } from './vscode/activation/credentials';
import type { EditorSideForTests } from './vscode/activation/editorSide';
import { registerEditorSide } from './vscode/activation/editorSide';
import { buildEndpoint } from './vscode/activation/endpoint';
import { probeSandbox, serviceOptions } from './vscode/activation/settingsWiring';
import { askSameWindow, chooseWindowState, keepWindowContinuity } from './vscode/activation/windowContinuity';

/** What the extension exports to other extensions and to its tests. Never the token. */
export interface CodeSpaceApi extends EditorSideForTests {
  endpointUrl(): string | undefined;
  /**
   * Only in VS Code's test mode (test/integration/network.test.ts): names the network proxy resolves to a loopback
   * stand-in registry, for one port. Absent otherwise; no setting reaches it.
   */
  readonly networkTestHostsForTests?: Map<string, { address: string; port: number }>;
}

let shutdown: (() => Promise<void>) | undefined;

/** Composition root: builds the pieces in order (src/vscode/activation), starts the endpoint, registers the UI. */
export async function activate(context: vscode.ExtensionContext): Promise<CodeSpaceApi> {
  const activationStarted = performance.now();
  // Where activation spends its time, in the ready line of the log (`npm run bench:editor` reads it).
  const phases = new StepTimes(activationStarted);
  context.subscriptions.push(cacheSettings());
  const log = new OutputLogger();
  context.subscriptions.push(log);
  const credentials = openCredentials(context, log);
  await askSameWindow(log);
  phases.mark('same window');
  const state = chooseWindowState(context, log);
  phases.mark('state folder');

  const testNetworkHosts = new Map<string, { address: string; port: number }>();
  const workspaces = new WorkspaceRegistry(new VsCodeWorkspaceSource());
  const workTree = new GitWorkBaseline({ log });
  const checkpoints = new FreezeGit({ log });
  const language = new VsCodeLanguageFeatures();
  const debug = new VsCodeDebug();
  context.subscriptions.push(language, debug, new DocumentWatchers(), workspaces);
  const core = await assembleServices(serviceOptions({ context, log, workspaces, stateDir: state.dir, workTree, checkpoints, language, debug, testNetworkHosts }));
  shutdown = core.shutdown;
  phases.mark(`services (${core.startup})`);
  // The editor's side needs no token: it is built while the tokens are still on their way.
  const uiFrom = context.subscriptions.length;
  const forTests = registerEditorSide({ core, workspaces, workTree, checkpoints, agents: credentials.agentDirectory, state: context.workspaceState, extensionUri: context.extensionUri, log }, context.subscriptions);
  phases.mark('editor UI');
  const secretsKnown = maskTokens(credentials, core.supervisor, log, context.subscriptions);
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
  const verified = credentials.verified();
  if (!verified) {
    await tokensOrUndo();
    phases.mark('token');
  }
  const { host, ports, discovery } = buildEndpoint(context, core, credentials, log, context.subscriptions);
  context.subscriptions.push(...keepWindowContinuity({ state, core, host, preferredPort: () => ports.preferredPort(), recordFile: () => discovery.recordFile, log }));
  phases.mark('endpoint');
  try {
    await host.start(ports.preferredPort());
    phases.mark('listen');
    // Read by `npm run bench:editor` (activation time) and the VSIX test.
    log.info(`[activate] ready in ${(performance.now() - activationStarted).toFixed(1)} ms (activate() to listening) on port ${host.port ?? '?'}; ${phases.toString()} ms${verified ? ' (tokens checked by their verifiers until they load)' : ''}`);
  } catch (err) {
    const message = describeError(err);
    log.error(`[activate] the MCP endpoint could not start: ${message}`);
    vscode.window.showErrorMessage(`CodeSpace: the MCP endpoint could not start: ${message}`, 'Show Log').then(
      (pick) => {
        if (pick) log.channel.show();
      },
      (e: unknown) => log.error('[activate] showing the error failed', describeErrorWithStack(e)),
    );
  }
  // Listening on the verifiers: activation ends once the tokens are here (the discovery record, the terminals'
  // environment and VS Code's own MCP client hear of them through onDidChange).
  if (verified) await tokensOrUndo();
  // The sandbox probe starts a process: after the endpoint listens, so the first request does not wait for it (the log
  // and workspace_info still say what holds, and a first command probes at once if this has not finished).
  probeSandbox(core, log);
  return {
    endpointUrl: () => endpointUrl(host),
    ...forTests,
    ...(context.extensionMode === vscode.ExtensionMode.Test ? { networkTestHostsForTests: testNetworkHosts } : {}),
  };
}

/** Ends every agent process before the extension host goes away (window close or reload). */
export async function deactivate(): Promise<void> {
  await shutdown?.();
  shutdown = undefined;
}
