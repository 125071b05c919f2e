import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FoundRecord, Selection } from '../core/discovery/record';
import { selectByUrl, selectByWorkspace, selectSameFolders } from '../core/discovery/record';
import { readRecords, readToken } from '../node/discovery/discoveryFiles';

/** The environment a CodeSpace window gives its terminals (src/vscode/connect/terminalEnvironment.ts). */
export const ENV_URL = 'CODESPACE_MCP_URL';
export const ENV_TOKEN = 'CODESPACE_MCP_TOKEN';

/** Where the bridge sends requests, and with which token. */
export interface Target {
  readonly url: string;
  readonly token: string;
  /** The window's folders when it was found through its record: how the same window is found after a reload. */
  readonly folders?: readonly string[];
  readonly describe: string;
}

/** Why no window can be used now. `retry`: a window may appear (reload); false: asking again will not help. */
export class LocateError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
  }
}

export interface LocateOptions {
  readonly dir: string;
  readonly env: NodeJS.ProcessEnv;
  /** `--workspace`, resolved against the bridge's cwd; when absent the environment, then the cwd, decide. */
  readonly workspace?: string;
  readonly cwd: string;
}

function realOrResolved(p: string, cwd: string): string {
  const abs = path.resolve(cwd, p);
  try {
    return fs.realpathSync(abs);
  } catch {
    return abs;
  }
}

function withToken(found: FoundRecord, envToken: string | undefined, how: string): Target {
  const token = readToken(found) ?? envToken;
  if (!token) {
    throw new LocateError(
      `The CodeSpace window (${found.record.url}) publishes no token file (codespace.discovery.tokenFile is off) and ${ENV_TOKEN} is not set. Start the agent from a terminal of that window, or turn the setting on.`,
      false,
    );
  }
  return { url: found.record.url, token, folders: found.record.workspaceFolders, describe: `${how}: ${found.record.url} (pid ${found.record.pid}, ${found.record.workspaceFolders.join(', ')})` };
}

function fromSelection(sel: Selection, envToken: string | undefined, how: string): Target {
  if (sel.kind === 'one') return withToken(sel.found, envToken, how);
  // No window now may be a window reloading; several windows stay several until one closes.
  throw new LocateError(sel.message, sel.kind === 'none');
}

/**
 * Finds the window to talk to. Order: an explicit `--workspace` (the window whose folders contain it); else the
 * terminal's CODESPACE_MCP_URL (the window that started the terminal); else the bridge's working directory.
 */
export function locate(options: LocateOptions): Target {
  const records = readRecords(options.dir);
  const envUrl = options.env[ENV_URL];
  const envToken = options.env[ENV_TOKEN] || undefined;
  if (options.workspace === undefined && envUrl) {
    const found = selectByUrl(records, envUrl);
    if (found) return withToken(found, envToken, `from ${ENV_URL}`);
    // Not in the records (a remote window, or the folder is not shared with us): use it as given, loopback only.
    if (!/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/mcp$/.test(envUrl)) throw new LocateError(`${ENV_URL}=${envUrl} is not a loopback CodeSpace endpoint.`, false);
    if (!envToken) throw new LocateError(`${ENV_URL} is set but ${ENV_TOKEN} is not, and no CodeSpace window record matches ${envUrl}.`, true);
    return { url: envUrl, token: envToken, describe: `from ${ENV_URL}: ${envUrl}` };
  }
  const target = realOrResolved(options.workspace ?? options.cwd, options.cwd);
  return fromSelection(selectByWorkspace(records, target), envToken, options.workspace !== undefined ? `--workspace ${target}` : `working directory ${target}`);
}

/**
 * The same window again after its endpoint went away (reload, restart, port change): by its folders when it was
 * found through a record, else as first located (the environment's URL, --workspace or cwd).
 */
export function relocate(options: LocateOptions, previous: Target): Target {
  if (previous.folders) {
    const sel = selectSameFolders(readRecords(options.dir), previous.folders);
    if (sel.kind === 'one') return withToken(sel.found, options.env[ENV_TOKEN] || undefined, 'same window');
  }
  return locate(options);
}
