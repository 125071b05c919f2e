import type * as vscode from 'vscode';
import type { ServerControl } from '../../../kernel/serverControl';
import { settings } from '../../../kernel/vscode/settings';

const KEY = 'codespace.lastPort';

/**
 * Keeps this workspace's endpoint on the same port across window reloads and restarts, so an HTTP configuration
 * copied earlier keeps working: the port last listened on is remembered in workspace state and asked for again
 * (when it is taken, the host falls back to a port the system picks, and that one is remembered). An explicit
 * `codespace.server.port` wins.
 */
export class PortMemory {
  private readonly sub: vscode.Disposable;

  constructor(
    private readonly state: vscode.Memento,
    server: ServerControl,
  ) {
    this.sub = server.onDidChangeState((s) => {
      if (s.kind === 'running' && s.port !== this.state.get<number>(KEY)) void this.state.update(KEY, s.port);
    });
  }

  preferredPort(): number {
    const configured = settings.port();
    if (configured !== 0) return configured;
    const last = this.state.get<number>(KEY);
    return typeof last === 'number' && Number.isInteger(last) && last > 1024 && last <= 65535 ? last : 0;
  }

  dispose(): void {
    this.sub.dispose();
  }
}
