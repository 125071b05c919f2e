import * as fs from 'node:fs';
import * as path from 'node:path';
import type * as NodePty from 'node-pty';

export type NodePtyModule = typeof NodePty;

/** Where a node-pty copy comes from: the editor's own application, or the copy shipped with the extension. */
export type NodePtySource = 'vscode' | 'bundled';

/** One folder that may hold node-pty (the folder with its package.json). */
export interface NodePtyCandidate {
  readonly source: NodePtySource;
  readonly dir: string;
}

/** Why one candidate was not used. */
export interface NodePtyFailure {
  readonly source: NodePtySource;
  readonly dir: string;
  readonly reason: string;
}

/** The outcome of a load: the module and where it came from, or none; and why each earlier candidate failed. */
export interface NodePtyLoad {
  readonly module?: NodePtyModule;
  readonly source?: NodePtySource;
  readonly dir?: string;
  /** node-pty's package version of the copy that loaded (VS Code's may be a prerelease, e.g. `1.1.0-beta33`). */
  readonly version?: string;
  readonly failures: readonly NodePtyFailure[];
}

/** Loads a module by absolute folder; for tests. */
export type RequireFn = (dir: string) => unknown;

/**
 * The places VS Code keeps its node-pty under its application root (`vscode.env.appRoot`): a plain
 * `node_modules` (current desktop builds, code-server), or an asar archive whose native files are unpacked next
 * to it (older desktop builds). The first one that loads wins.
 */
export function vscodeNodePtyDirs(appRoot: string): string[] {
  return ['node_modules', 'node_modules.asar.unpacked', 'node_modules.asar'].map((d) => path.join(appRoot, d, 'node-pty'));
}

/**
 * The copies shipped with the extension: `dist/node-pty` in a packaged VSIX (scripts/package.mjs stages it),
 * `node_modules/node-pty` in a development checkout.
 */
export function bundledNodePtyDirs(extensionRoot: string): string[] {
  return [path.join(extensionRoot, 'dist', 'node-pty'), path.join(extensionRoot, 'node_modules', 'node-pty')];
}

/** Candidates in the order they are tried: VS Code's own copy first (built for its runtime), then ours. */
export function nodePtyCandidates(o: { appRoot?: string; extensionRoot?: string }): NodePtyCandidate[] {
  const out: NodePtyCandidate[] = [];
  if (o.appRoot) out.push(...vscodeNodePtyDirs(o.appRoot).map((dir) => ({ source: 'vscode' as const, dir })));
  if (o.extensionRoot) out.push(...bundledNodePtyDirs(o.extensionRoot).map((dir) => ({ source: 'bundled' as const, dir })));
  return out;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message.split('\n')[0] ?? err.message : String(err);
}

function readVersion(dir: string): string | undefined {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: unknown; version?: unknown };
    if (pkg.name !== 'node-pty') return undefined;
    return typeof pkg.version === 'string' ? pkg.version : '';
  } catch {
    return undefined;
  }
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const defaultRequire: RequireFn = (dir) => require(dir) as unknown;

/**
 * Tries each candidate in turn and returns the first node-pty that loads and offers the API this extension uses
 * (`spawn`). A candidate is skipped, with its reason, when its folder holds no node-pty package, when requiring
 * it throws (a native binary built for another runtime or platform fails here), or when it lacks `spawn`.
 * Never throws.
 */
export function loadNodePty(candidates: readonly NodePtyCandidate[], requireFn: RequireFn = defaultRequire): NodePtyLoad {
  const failures: NodePtyFailure[] = [];
  for (const c of candidates) {
    const version = readVersion(c.dir);
    if (version === undefined) {
      failures.push({ ...c, reason: 'no node-pty package there' });
      continue;
    }
    let loaded: unknown;
    try {
      loaded = requireFn(c.dir);
    } catch (err) {
      failures.push({ ...c, reason: `it did not load: ${message(err)}` });
      continue;
    }
    if (!loaded || typeof (loaded as { spawn?: unknown }).spawn !== 'function') {
      failures.push({ ...c, reason: 'it loaded but has no spawn function' });
      continue;
    }
    return { module: loaded as NodePtyModule, source: c.source, dir: c.dir, ...(version ? { version } : {}), failures };
  }
  return { failures };
}

/** One line for the log: which copy loaded, and why the ones before it did not. */
export function describeNodePtyLoad(load: NodePtyLoad): string {
  const skipped = load.failures.map((f) => `${f.source} ${f.dir}: ${f.reason}`).join('; ');
  if (load.module) {
    const head = `node-pty ${load.version ?? '(unknown version)'} loaded from ${load.source === 'vscode' ? "VS Code's application" : 'the extension (bundled copy)'}: ${load.dir}`;
    return skipped ? `${head} (skipped: ${skipped})` : head;
  }
  return `node-pty could not be loaded, so terminal (PTY) processes are unavailable${skipped ? `: ${skipped}` : ' (no candidate given)'}`;
}
