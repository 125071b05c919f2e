import * as vscode from 'vscode';
import type { Approvals } from '../../kernel/approvals/hold';
import { COMMANDS } from '../../kernel/vscode/commandIds';

/** `$(bell-dot) N` while N holds wait for the reviewer (hidden at 0); a click shows the panel. */
export class ApprovalsStatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly sub: { dispose(): void };
  private shown = 0;

  constructor(private readonly approvals: Approvals) {
    this.item = vscode.window.createStatusBarItem('codespace.approvals', vscode.StatusBarAlignment.Right, 101);
    this.item.name = 'CodeSpace Approvals';
    this.item.command = COMMANDS.showPanel;
    this.sub = approvals.onDidChange(() => this.render());
    this.render();
  }

  /** Pending holds shown now (0 when hidden). */
  get count(): number {
    return this.shown;
  }

  private render(): void {
    const n = this.approvals.pending().length;
    this.shown = n;
    if (n === 0) {
      this.item.hide();
      return;
    }
    this.item.text = `$(bell-dot) ${n}`;
    this.item.accessibilityInformation = { label: `CodeSpace: ${n} pending approval${n === 1 ? '' : 's'}` };
    this.item.tooltip = `CodeSpace: ${n} agent request${n === 1 ? '' : 's'} waiting for your approval. Click to show the panel.`;
    this.item.show();
  }

  dispose(): void {
    this.sub.dispose();
    this.item.dispose();
  }
}
