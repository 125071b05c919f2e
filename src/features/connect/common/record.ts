import * as path from 'node:path';

/**
 * What each window's endpoint publishes so that local clients (the stdio bridge first) find it without a port
 * typed by hand. Written by src/features/connect/node, read by the bridge. Never holds the token: that sits in a file of
 * its own next to the record (see README "Security model").
 */
export interface DiscoveryRecord {
  readonly version: 1;
  /** Process id of the extension host that serves the endpoint; a record of a dead pid is stale. */
  readonly pid: number;
  readonly port: number;
  /** `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  readonly protocol: 'mcp-streamable-http';
  /** Absolute paths of the window's workspace folders, in the window's order. */
  readonly workspaceFolders: readonly string[];
  /** ISO time the record was first written (kept across port changes). */
  readonly createdAt: string;
  /** The extension's version. */
  readonly serverVersion: string;
  /** The process's start time as the OS gives it (Linux: /proc/<pid>/stat), so a reused pid is not taken for it. */
  readonly pidStart?: string;
}

export const RECORD_VERSION = 1;
export const RECORD_SUFFIX = '.json';
export const TOKEN_SUFFIX = '.token';

function isPort(n: unknown): n is number {
  return typeof n === 'number' && Number.isInteger(n) && n > 0 && n <= 65535;
}

/** Parses a record's text; undefined for anything malformed (a record we cannot trust is not a window). */
export function parseRecord(text: string): DiscoveryRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const r = v as Record<string, unknown>;
  if (r.version !== RECORD_VERSION || r.protocol !== 'mcp-streamable-http') return undefined;
  if (typeof r.pid !== 'number' || !Number.isInteger(r.pid) || r.pid <= 0 || !isPort(r.port)) return undefined;
  if (r.url !== endpointUrlFor(r.port)) return undefined;
  if (!Array.isArray(r.workspaceFolders) || !r.workspaceFolders.every((f) => typeof f === 'string' && path.isAbsolute(f))) return undefined;
  if (typeof r.createdAt !== 'string' || Number.isNaN(Date.parse(r.createdAt))) return undefined;
  return {
    version: RECORD_VERSION,
    pid: r.pid,
    port: r.port,
    url: r.url,
    protocol: 'mcp-streamable-http',
    workspaceFolders: r.workspaceFolders as string[],
    createdAt: r.createdAt,
    serverVersion: typeof r.serverVersion === 'string' ? r.serverVersion : '',
    ...(typeof r.pidStart === 'string' && r.pidStart !== '' ? { pidStart: r.pidStart } : {}),
  };
}

/** The one URL shape a record may carry: loopback, our path. A record cannot send the bridge elsewhere. */
export function endpointUrlFor(port: number): string {
  return `http://127.0.0.1:${port}/mcp`;
}

/** A record with where it was read from (the bridge needs the token file next to it). */
export interface FoundRecord {
  readonly record: DiscoveryRecord;
  /** Absolute path of the record file. */
  readonly file: string;
}

export type Selection =
  | { readonly kind: 'one'; readonly found: FoundRecord }
  | { readonly kind: 'none'; readonly message: string }
  | { readonly kind: 'many'; readonly message: string; readonly candidates: readonly FoundRecord[] };

function describeWindow(f: FoundRecord): string {
  return `pid ${f.record.pid}, port ${f.record.port}, folders ${f.record.workspaceFolders.map((x) => JSON.stringify(x)).join(', ') || '(none)'}`;
}

/** True when `child` is `parent` or below it (segment-wise; "/a/bc" is not inside "/a/b"). */
export function pathContains(parent: string, child: string, pathApi: path.PlatformPath = path): boolean {
  const rel = pathApi.relative(parent, child);
  return rel === '' || (!pathApi.isAbsolute(rel) && rel.split(pathApi.sep)[0] !== '..');
}

/**
 * The window serving `target` (an absolute, real path): the record with a workspace folder that contains it.
 * Multi-root: several folders of one window may contain it (nested folders): still one window. When several
 * windows do, the deepest folder wins (a window on `repo/pkg` is a better match for `repo/pkg/src` than one on
 * `repo`); a tie between windows is ambiguous and reported with each candidate.
 */
export function selectByWorkspace(records: readonly FoundRecord[], target: string, pathApi: path.PlatformPath = path): Selection {
  let best: { depth: number; found: FoundRecord[] } = { depth: -1, found: [] };
  for (const f of records) {
    const depth = Math.max(-1, ...f.record.workspaceFolders.filter((folder) => pathContains(folder, target, pathApi)).map((folder) => pathApi.resolve(folder).length));
    if (depth < 0) continue;
    if (depth > best.depth) best = { depth, found: [f] };
    else if (depth === best.depth) best.found.push(f);
  }
  if (best.found.length === 1) return { kind: 'one', found: best.found[0] as FoundRecord };
  if (best.found.length === 0) {
    const open = records.length === 0 ? 'No CodeSpace window is running for this user.' : `Open CodeSpace windows: ${records.map(describeWindow).join('; ')}.`;
    return { kind: 'none', message: `No VS Code window with CodeSpace has a workspace folder containing ${JSON.stringify(target)}. ${open} Open that folder in VS Code, or pass --workspace <path inside an open folder>.` };
  }
  return {
    kind: 'many',
    candidates: best.found,
    message: `${best.found.length} VS Code windows have a workspace folder containing ${JSON.stringify(target)}: ${best.found.map(describeWindow).join('; ')}. Close one of them, or start the agent from a terminal of the window you mean (it sets CODESPACE_MCP_URL).`,
  };
}

/** The window listening on `url` (the CODESPACE_MCP_URL of a terminal). */
export function selectByUrl(records: readonly FoundRecord[], url: string): FoundRecord | undefined {
  return records.find((f) => f.record.url === url);
}

/** True when a record names exactly `folders`, in that order (what the same window publishes again after a reload). */
export function hasSameFolders(record: DiscoveryRecord, folders: readonly string[]): boolean {
  return record.workspaceFolders.length === folders.length && record.workspaceFolders.every((x, i) => x === folders[i]);
}

/** Same window after a reload: the same folders in the same order; the newest record when several match. */
export function selectSameFolders(records: readonly FoundRecord[], folders: readonly string[]): Selection {
  const same = records.filter((f) => hasSameFolders(f.record, folders));
  if (same.length === 0) return { kind: 'none', message: `No CodeSpace window has the folders ${folders.map((x) => JSON.stringify(x)).join(', ')} open any more.` };
  const newest = [...same].sort((a, b) => Date.parse(b.record.createdAt) - Date.parse(a.record.createdAt));
  return { kind: 'one', found: newest[0] as FoundRecord };
}
