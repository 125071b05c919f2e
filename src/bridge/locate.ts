import * as fs from 'node:fs';
import * as path from 'node:path';
import type { FoundRecord, Selection } from '../features/connect';
import { selectByUrl, selectByWorkspace, selectSameFolders } from '../features/connect';
import { readAllRecords, readToken } from '../features/connect/node';
import { agentCredential } from './upstreamHeaders';

/** The environment a CodeSpace window gives its terminals (src/features/connect/vscode/terminalEnvironment.ts). */
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
  /** The discovery folders to search, the canonical one first (discoveryDirs). */
  readonly dirs: readonly string[];
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

/**
 * Why no token reached the bridge, and what to do. With the token file off, the token can only come from the
 * environment of a terminal of the window, and agents filter what they pass to MCP servers: Codex passes a fixed
 * short list (no CODESPACE_* at all) unless `env_vars` names more; Gemini CLI drops variables that look like
 * secrets (`*_TOKEN`) unless the server's `env` names them. A URL that arrived without its token is that filter.
 */
export function missingTokenMessage(lead: string, env: NodeJS.ProcessEnv): string {
  const stripped = env[ENV_URL]
    ? `${ENV_URL} reached the bridge but ${ENV_TOKEN} did not: the agent was started from a VS Code terminal and removed the token from the environment it gives MCP servers (Gemini CLI drops variables named like *_TOKEN).`
    : `Neither ${ENV_URL} nor ${ENV_TOKEN} reached the bridge: either the agent was not started from a terminal of that window, or it gave the bridge a reduced environment (Codex passes HOME, LANG, LOGNAME, PATH, SHELL, TERM, TMPDIR, USER and little else).`;
  return [
    lead,
    stripped,
    `Turn codespace.discovery.tokenFile on (user settings), or start the agent from a terminal of that window and let it pass both variables to the bridge:`,
    `Codex: env_vars = ["${ENV_URL}", "${ENV_TOKEN}"] in [mcp_servers.codespace] of ~/.codex/config.toml;`,
    `Gemini CLI: "env": {"${ENV_URL}": "$${ENV_URL}", "${ENV_TOKEN}": "$${ENV_TOKEN}"} in the server's entry of settings.json.`,
  ].join(' ');
}

function withToken(found: FoundRecord, env: NodeJS.ProcessEnv, how: string): Target {
  // An agent's own credential opens the endpoint as well (upstreamHeaders sends it whenever it is set).
  const token = readToken(found) ?? (env[ENV_TOKEN] || agentCredential(env));
  if (!token) throw new LocateError(missingTokenMessage(`The CodeSpace window (${found.record.url}) publishes no token file (codespace.discovery.tokenFile is off).`, env), false);
  return { url: found.record.url, token, folders: found.record.workspaceFolders, describe: `${how}: ${found.record.url} (pid ${found.record.pid}, ${found.record.workspaceFolders.join(', ')})` };
}

function fromSelection(sel: Selection, options: LocateOptions, how: string): Target {
  if (sel.kind === 'one') return withToken(sel.found, options.env, how);
  // No window now may be a window reloading; several windows stay several until one closes.
  if (sel.kind === 'none') throw new LocateError(`${sel.message} (Searched ${options.dirs.join(', ')}.)`, true);
  throw new LocateError(sel.message, false);
}

/**
 * Finds the window to talk to. Order: an explicit `--workspace` (the window whose folders contain it); else the
 * terminal's CODESPACE_MCP_URL (the window that started the terminal); else the bridge's working directory.
 */
export function locate(options: LocateOptions): Target {
  const records = readAllRecords(options.dirs);
  const envUrl = options.env[ENV_URL];
  const envToken = options.env[ENV_TOKEN] || agentCredential(options.env);
  if (options.workspace === undefined && envUrl) {
    const found = selectByUrl(records, envUrl);
    if (found) return withToken(found, options.env, `from ${ENV_URL}`);
    // Not in the records (a remote window, or the folder is not shared with us): use it as given, loopback only.
    if (!/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/mcp$/.test(envUrl)) throw new LocateError(`${ENV_URL}=${envUrl} is not a loopback CodeSpace endpoint.`, false);
    if (!envToken) throw new LocateError(missingTokenMessage(`No CodeSpace window record matches ${envUrl}, so its token file cannot be read.`, options.env), true);
    return { url: envUrl, token: envToken, describe: `from ${ENV_URL}: ${envUrl}` };
  }
  const target = realOrResolved(options.workspace ?? options.cwd, options.cwd);
  return fromSelection(selectByWorkspace(records, target), options, options.workspace !== undefined ? `--workspace ${target}` : `working directory ${target}`);
}

/**
 * The same window again after its endpoint went away (reload, restart, port change): by its folders when it was
 * found through a record, else as first located (the environment's URL, --workspace or cwd).
 */
export function relocate(options: LocateOptions, previous: Target): Target {
  if (previous.folders) {
    const sel = selectSameFolders(readAllRecords(options.dirs), previous.folders);
    if (sel.kind === 'one') return withToken(sel.found, options.env, 'same window');
  }
  return locate(options);
}
