import * as vscode from 'vscode';
import type { ServerControl } from '../../../kernel/serverControl';
import { describeError } from '../../../base/describeError';

/** The shape of VS Code's port attributes API (proposal `portsAttributes`), detected at run time. */
interface PortAttributesApi {
  registerPortAttributesProvider(selector: { portRange?: [number, number] }, provider: { providePortAttributes(attributes: { port: number }, token: vscode.CancellationToken): unknown }): vscode.Disposable;
}
type PortAttributesCtor = new (autoForwardAction: number) => unknown;

/**
 * Keeps VS Code from auto-forwarding the endpoint's port in a remote window (Remote-SSH, WSL, dev containers,
 * Codespaces): the endpoint is for agents on the machine that holds the files, never for the local one. Uses
 * `workspace.registerPortAttributesProvider` where the running VS Code lets this extension call it (the API is
 * still a proposal in 1.100: it throws for extensions that do not declare it, and then this does nothing; the
 * README gives the `remote.portsAttributes` setting as the fallback). Re-registered for each new port.
 * Returns whether the provider is active, for the log.
 */
export function registerPortAttributes(server: ServerControl, log: (line: string) => void): vscode.Disposable {
  const api = vscode.workspace as unknown as Partial<PortAttributesApi>;
  const Attributes = (vscode as unknown as { PortAttributes?: PortAttributesCtor }).PortAttributes;
  const actions = (vscode as unknown as { PortAutoForwardAction?: { Ignore?: number } }).PortAutoForwardAction;
  if (typeof api.registerPortAttributesProvider !== 'function' || typeof Attributes !== 'function' || typeof actions?.Ignore !== 'number') {
    log('[connect] this VS Code has no port attributes API: set "remote.portsAttributes" to keep the endpoint port from being forwarded');
    return { dispose() {} };
  }
  const ignore = actions.Ignore;
  let registration: vscode.Disposable | undefined;
  let unavailable = false;
  const register = (): void => {
    registration?.dispose();
    registration = undefined;
    const state = server.state;
    if (state.kind !== 'running' || unavailable) return;
    const port = state.port;
    try {
      registration = api.registerPortAttributesProvider?.({ portRange: [port, port + 1] }, {
        providePortAttributes: (attributes) => (attributes.port === port ? new Attributes(ignore) : undefined),
      });
    } catch (err) {
      unavailable = true;
      log(`[connect] the port attributes API is not open to this extension (${describeError(err)}): set "remote.portsAttributes" to keep port ${port} from being forwarded`);
    }
  };
  register();
  const sub = server.onDidChangeState(register);
  return {
    dispose: () => {
      sub.dispose();
      registration?.dispose();
    },
  };
}
