import type { DiscoveryRecord } from '../common/record';
import { RECORD_VERSION, endpointUrlFor } from '../common/record';
import type { Logger } from '../../../base/logger';
import type { ServerControl } from '../../../kernel/serverControl';
import { DiscoveryEntry, discoveryDir, ownPidStart } from './discoveryFiles';
import { describeError } from '../../../base/describeError';

export interface WindowPublisherOptions {
  readonly server: ServerControl;
  /** Absolute paths of the window's workspace folders. */
  readonly folders: () => readonly string[];
  readonly token: () => string | undefined;
  /** `codespace.discovery.tokenFile`: publish the token file next to the record. */
  readonly publishToken: () => boolean;
  readonly version: string;
  readonly logger: Logger;
  readonly dir?: string;
}

/**
 * Publishes this window's discovery record while its endpoint runs, rewrites it when the port, the folders or the
 * token change (call `refresh`), and removes it when the endpoint stops or the extension deactivates.
 */
export class WindowPublisher {
  private entry: DiscoveryEntry | undefined;
  private createdAt: string | undefined;
  private readonly sub: { dispose(): void };
  private disposed = false;
  private readonly pidStart = ownPidStart();
  readonly dir: string;

  constructor(private readonly options: WindowPublisherOptions) {
    this.dir = options.dir ?? discoveryDir();
    this.sub = options.server.onDidChangeState(() => this.refresh());
  }

  /** The record file while one is published (tests and the log read it). */
  get recordFile(): string | undefined {
    return this.entry?.recordFile;
  }

  refresh(): void {
    if (this.disposed) return;
    const state = this.options.server.state;
    try {
      if (state.kind !== 'running') {
        this.entry?.remove();
        this.entry = undefined;
        return;
      }
      const token = this.options.publishToken() ? this.options.token() : undefined;
      // The endpoint may listen before the token has loaded (it checks tokens by their verifier meanwhile): a
      // record whose token file is due waits for the token, so a bridge never finds one without it.
      if (this.options.publishToken() && token === undefined) return;
      if (!this.entry) {
        this.entry = DiscoveryEntry.create(this.dir);
        this.createdAt = new Date().toISOString();
      }
      const record: DiscoveryRecord = {
        version: RECORD_VERSION,
        pid: process.pid,
        port: state.port,
        url: endpointUrlFor(state.port),
        protocol: 'mcp-streamable-http',
        workspaceFolders: [...this.options.folders()],
        createdAt: this.createdAt as string,
        serverVersion: this.options.version,
        ...(this.pidStart !== undefined ? { pidStart: this.pidStart } : {}),
      };
      this.entry.write(record, token);
    } catch (err) {
      this.options.logger.error(`[discovery] publishing this window's record in ${this.dir} failed: ${describeError(err)}`);
    }
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    this.sub.dispose();
    try {
      this.entry?.remove();
    } catch (err) {
      this.options.logger.error(`[discovery] removing this window's record failed: ${describeError(err)}`);
    }
    this.entry = undefined;
  }
}
