import * as vscode from 'vscode';
import type { Logger } from '../../base/logger';
import type { HostMessage, PanelState } from '../../shared/panelProtocol';
import { COMMANDS } from '../../kernel/vscode/commandIds';
import { ApprovalsStatusBar } from './approvalsStatusBar';
import { PanelController } from './panelController';
import type { PanelSources } from './panelController';
import { newNonce, panelHtml } from './panelHtml';

/** The view container (activity bar) and the webview view, as package.json contributes them. */
export const PANEL_CONTAINER_ID = 'codespace';
export const PANEL_VIEW_ID = 'codespace.panel';

/**
 * For the in-editor tests only (read from the extension's exports by test/integration/panel.test.ts). It lives in
 * the extension host's memory: no MCP tool, command or webview reaches it, so agents never can.
 */
export interface PanelForTests {
  /** Handles `message` as if the live webview had posted it; resolves with the reply posted back (if any). */
  handleMessage(message: unknown): Promise<HostMessage | undefined>;
  /** The last state posted to the page (undefined until the page has loaded and said `ready`). */
  lastState(): PanelState | undefined;
  /** Whether a webview is resolved and its page has said `ready`. */
  isReady(): boolean;
  /** `webviewView.badge` as set now (undefined: no view resolved; value 0: no badge shown). */
  badge(): { readonly value: number; readonly tooltip: string } | undefined;
  /** The count the status bar item shows (0: hidden). */
  statusBarCount(): number;
}

export interface PanelDeps extends PanelSources {
  readonly extensionUri: vscode.Uri;
}

export interface PanelRegistration extends vscode.Disposable {
  readonly forTests: PanelForTests;
}

class PanelViewProvider implements vscode.WebviewViewProvider {
  private view: vscode.WebviewView | undefined;
  private token = -1;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: PanelController,
    private readonly log: Logger,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    const webviewRoot = vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview');
    const mediaRoot = vscode.Uri.joinPath(this.extensionUri, 'media');
    view.webview.options = { enableScripts: true, enableCommandUris: false, localResourceRoots: [webviewRoot, mediaRoot] };
    this.view = view;
    const token = this.controller.attach({
      post: (message) => view.webview.postMessage(message),
      setBadge: (n, tooltip) => {
        // 0, not undefined, clears it: the workbench keeps showing the last badge of a webview view set back to
        // undefined (fixed upstream by microsoft/vscode#331019), while a number badge of 0 is not drawn.
        view.badge = n > 0 ? { value: n, tooltip } : { value: 0, tooltip: '' };
      },
    });
    this.token = token;
    const subs = [
      view.webview.onDidReceiveMessage((raw: unknown) => void this.controller.handleMessage(raw, token)),
      view.onDidChangeVisibility(() => {
        // Without retainContextWhenHidden the page is torn down while hidden; it says `ready` again when shown.
        if (!view.visible) this.controller.unready(token);
      }),
    ];
    view.onDidDispose(() => {
      for (const s of subs) s.dispose();
      this.controller.detach(token);
      if (this.view === view) this.view = undefined;
      this.log.debug('[panel] the view was disposed');
    });
    view.webview.html = panelHtml({
      cspSource: view.webview.cspSource,
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(webviewRoot, 'panel.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(mediaRoot, 'panel.css')).toString(),
      nonce: newNonce(),
    });
  }

  forTests(): Pick<PanelForTests, 'handleMessage' | 'badge'> {
    return {
      handleMessage: (message) => this.controller.handleMessage(message, this.token),
      badge: () => {
        const b = this.view?.badge;
        return b ? { value: b.value, tooltip: b.tooltip } : undefined;
      },
    };
  }
}

/**
 * The CodeSpace panel: a webview view in its own activity-bar container showing pending approvals, recent
 * activity and agent processes, its badge and the approvals status bar item, and the Show Panel command.
 */
export function registerPanel(deps: PanelDeps): PanelRegistration {
  const controller = new PanelController({
    approvals: deps.approvals,
    activity: deps.activity,
    ...(deps.steering ? { steering: deps.steering } : {}),
    ...(deps.reviewable ? { reviewable: deps.reviewable } : {}),
    ...(deps.agents ? { agents: deps.agents } : {}),
    log: deps.log,
    executeCommand: (command, ...args) => vscode.commands.executeCommand(command, ...args),
  });
  const provider = new PanelViewProvider(deps.extensionUri, controller, deps.log);
  const statusBar = new ApprovalsStatusBar(deps.approvals);
  const disposables: vscode.Disposable[] = [
    controller,
    statusBar,
    vscode.window.registerWebviewViewProvider(PANEL_VIEW_ID, provider),
    vscode.commands.registerCommand(COMMANDS.showPanel, () => vscode.commands.executeCommand(`${PANEL_VIEW_ID}.focus`)),
  ];
  const hooks = provider.forTests();
  return {
    forTests: {
      handleMessage: hooks.handleMessage,
      badge: hooks.badge,
      lastState: () => controller.lastPosted(),
      isReady: () => controller.isReady(),
      statusBarCount: () => statusBar.count,
    },
    dispose: () => {
      for (const d of disposables.reverse()) d.dispose();
    },
  };
}
