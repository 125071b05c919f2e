import type { Disposable } from '../base/disposable';

export type ServerState =
  | { readonly kind: 'stopped' }
  | { readonly kind: 'starting' }
  | { readonly kind: 'running'; readonly port: number; readonly fellBack: boolean }
  | { readonly kind: 'failed'; readonly message: string };

/** What the editor UI needs of the MCP endpoint; the HTTP host implements it. */
export interface ServerControl {
  readonly state: ServerState;
  readonly sessionCount: number;
  onDidChangeState(listener: (s: ServerState) => void): Disposable;
  start(preferredPort: number): Promise<number>;
  stop(): Promise<void>;
  closeSessions(): Promise<void>;
}

/** The endpoint's URL while it runs, for an agent's configuration. */
export function endpointUrl(server: ServerControl): string | undefined {
  return server.state.kind === 'running' ? `http://127.0.0.1:${server.state.port}/mcp` : undefined;
}
