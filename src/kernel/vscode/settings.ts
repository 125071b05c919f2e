import * as vscode from 'vscode';
import type { ApprovalPolicy } from '../approvals/approvalService';
import { DEFAULT_APPROVAL_POLICY } from '../approvals/approvalService';
import type { ReviewMode } from '../approvals/holdPolicy';
import type { Profile } from '../workspaceSource';
import type { Limits } from '../limits';
import { DEFAULT_LIMITS } from '../limits';

export const SECTION = 'codespace';

/** The section's settings, read once per change while `cacheSettings` runs (every tool call reads several). */
let cached: vscode.WorkspaceConfiguration | undefined;
/**
 * What `inspect` said of each key, in the same snapshot: VS Code's `inspect` walks and copies its configuration
 * models on every call, and `read_process` asks for the redaction values on every read (the profile of a flood
 * read by an agent put it among the extension host's largest allocators).
 */
const inspections = new Map<string, unknown>();
/**
 * Values of the section read without a scope, in the same snapshot: `get` checks the key's scope against the
 * configuration registry on each call, and `read` asks for its limit on every call. Only numbers, strings and
 * booleans: an object is handed out anew each time, so no caller can change another's.
 */
const values = new Map<string, number | string | boolean>();
let caching = false;

/** The `codespace` section, from the snapshot while `cacheSettings` runs. */
export function section(): vscode.WorkspaceConfiguration {
  if (!caching) return vscode.workspace.getConfiguration(SECTION);
  cached ??= vscode.workspace.getConfiguration(SECTION);
  return cached;
}

/** What `WorkspaceConfiguration.inspect<T>` returns. */
type Inspected<T> = { readonly key: string; readonly defaultValue?: T; readonly globalValue?: T; readonly workspaceValue?: T; readonly workspaceFolderValue?: T } | undefined;

/** `inspect` of a key of the section, from the snapshot while `cacheSettings` runs. */
function inspect<T>(key: string): Inspected<T> {
  if (!caching) return section().inspect<T>(key);
  if (!inspections.has(key)) inspections.set(key, section().inspect<T>(key));
  return inspections.get(key) as Inspected<T>;
}

/**
 * Keeps one snapshot of the `codespace` settings until they or the workspace trust change: `getConfiguration` builds
 * the merged view anew on each call, which the profile of a `read` showed as a measurable part of a small call.
 * Call first in activate(), so the snapshot is dropped before any other listener of a change reads the settings.
 */
export function cacheSettings(): vscode.Disposable {
  caching = true;
  const drop = (): void => {
    cached = undefined;
    inspections.clear();
    values.clear();
  };
  const subscriptions = [vscode.workspace.onDidChangeConfiguration(drop), vscode.workspace.onDidGrantWorkspaceTrust(drop)];
  return {
    dispose() {
      for (const s of subscriptions) s.dispose();
      caching = false;
      cached = undefined;
      inspections.clear();
      values.clear();
    },
  };
}

/**
 * Reads a setting. Settings that relax safety are honoured from user (global) scope only while the workspace
 * is untrusted, so a cloned repository's .vscode/settings.json cannot widen what agents may do.
 */
/** A setting of the `codespace` section (see the notes above on scopes and trust). */
export function read<T>(key: string, fallback: T, scope?: vscode.ConfigurationScope, safetyRelevant = false): T {
  const config = scope === undefined ? section() : vscode.workspace.getConfiguration(SECTION, scope);
  if (safetyRelevant && !vscode.workspace.isTrusted) {
    const inspected = config.inspect<T>(key);
    return inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
  }
  if (!caching || scope !== undefined) return config.get<T>(key, fallback);
  const known = values.get(key);
  if (known !== undefined) return known as T;
  const value = config.get<T>(key);
  if (value === undefined) return fallback;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') values.set(key, value);
  return value;
}

/**
 * An approval setting from user (global) settings only. The settings are `application`-scoped, so VS Code refuses
 * to write them into workspace settings; reading the global value alone also ignores one that a cloned
 * repository's .vscode/settings.json or .code-workspace file carries anyway.
 */
function userValue<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
  const v = inspect<string>(key)?.globalValue;
  return allowed.includes(v as T) ? (v as T) : fallback;
}

export const settings = {
  /** Approval settings, honoured from user settings only. */
  approvals(): ApprovalPolicy {
    return {
      patches: userValue('approvals.patches', ['off', 'sensitive', 'confirm'], DEFAULT_APPROVAL_POLICY.patches),
      commands: userValue('approvals.commands', ['off', 'confirm'], DEFAULT_APPROVAL_POLICY.commands),
      agentMayResolve: inspect<boolean>('approvals.agentMayResolve')?.globalValue === true,
    };
  },
  /** `codespace.exec.isolation`, from user settings only (a workspace cannot turn the sandbox off). */
  execIsolation(): 'auto' | 'required' | 'off' {
    return userValue('exec.isolation', ['auto', 'required', 'off'], 'auto');
  },
  /** `codespace.exec.network`, from user settings only. */
  execNetwork(): 'block' | 'allow' | 'domains' {
    return userValue('exec.network', ['block', 'allow', 'domains'], 'block');
  },
  /** `codespace.exec.unixSockets`, from user settings only (a workspace cannot weaken the sandbox). */
  execUnixSockets(): 'block' | 'allow' {
    return userValue('exec.unixSockets', ['block', 'allow'], 'block');
  },
  /** `codespace.exec.gitWrites`, from user settings only. */
  execGitWrites(): 'none' | 'commit' {
    return userValue('exec.gitWrites', ['none', 'commit'], 'none');
  },
  /** `codespace.exec.incompleteProtection`, from user settings only. */
  execIncompleteProtection(): 'refuse' | 'protectKnown' {
    return userValue('exec.incompleteProtection', ['refuse', 'protectKnown'], 'refuse');
  },
  /** `codespace.works.isolation`: where a work edits when work_open names nothing. */
  workIsolation(): 'shared' | 'worktree' {
    return read<string>('works.isolation', 'shared') === 'worktree' ? 'worktree' : 'shared';
  },
  /** `codespace.works.maxWorktrees`, from user settings only (1 to 64, default 8). */
  worksMaxWorktrees(): number {
    const v = inspect<number>('works.maxWorktrees')?.globalValue;
    return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 64 ? v : 8;
  },
  /** `codespace.works.maxWorktreeDiskMiB`, from user settings only (0: no bound; default 2048). */
  worksMaxWorktreeDiskMiB(): number {
    const v = section().inspect<number>('works.maxWorktreeDiskMiB')?.globalValue;
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 16 * 1024 * 1024 ? v : 2048;
  },
  /** `codespace.exec.maxProcesses`, from user settings only (0: no bound). */
  execMaxProcesses(): number {
    const v = inspect<number>('exec.maxProcesses')?.globalValue;
    return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : 512;
  },
  port(): number {
    const p = read<number>('server.port', 0);
    return Number.isInteger(p) && p >= 0 && p <= 65535 ? p : 0;
  },
  profile(folder: vscode.WorkspaceFolder): Profile {
    const p = read<string>('profile', 'exec', folder, true);
    return p === 'read-only' || p === 'write' || p === 'exec' ? p : 'read-only';
  },
  workspaceId(folder: vscode.WorkspaceFolder): string | undefined {
    const id = read<string>('workspaceId', '', folder);
    return id.trim() === '' ? undefined : id;
  },
  limits(): Limits {
    return {
      readBytes: read<number>('limits.readBytes', DEFAULT_LIMITS.readBytes),
      findResults: read<number>('limits.findResults', DEFAULT_LIMITS.findResults),
      retainedOutputBytes: read<number>('exec.retainedOutputBytes', DEFAULT_LIMITS.retainedOutputBytes),
    };
  },
  execEnv(): Record<string, string | null> {
    const env = read<Record<string, unknown>>('exec.env', {}, undefined, true);
    const out: Record<string, string | null> = {};
    for (const [k, v] of Object.entries(env ?? {})) if (typeof v === 'string' || v === null) out[k] = v;
    return out;
  },
  execTimeoutMs(): number {
    const s = read<number>('exec.timeoutSeconds', 1800, undefined, true);
    return Number.isFinite(s) && s > 0 ? s * 1000 : 0;
  },
  /** `codespace.redaction.enabled`, from user settings only (a workspace cannot turn redaction off). */
  redactionEnabled(): boolean {
    return inspect<boolean>('redaction.enabled')?.globalValue !== false;
  },
  /** `codespace.redaction.values`, from user settings only. */
  redactionValues(): string[] {
    const v = inspect<unknown>('redaction.values')?.globalValue;
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  },
  /** `codespace.diagnostics.settleMs`: how long an edited file's diagnostics are followed in the background; 0: not at all. */
  diagnosticsSettleMs(): number {
    const ms = read<number>('diagnostics.settleMs', 5000);
    return Number.isFinite(ms) && ms > 0 ? Math.min(ms, 30_000) : 0;
  },
  /**
   * `codespace.tools.disabledGroups`: the user's and the workspace's entries together, so a workspace can turn more
   * groups off but never serve one again that the user turned off. Unchecked: ToolGroups names what it ignores.
   */
  toolsDisabledGroups(): unknown[] {
    const inspected = inspect<unknown>('tools.disabledGroups');
    const entries = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
    return [...entries(inspected?.globalValue), ...entries(inspected?.workspaceValue), ...entries(inspected?.workspaceFolderValue)];
  },
  /** User settings only: a workspace cannot turn on a group served only on request. */
  toolsEnabledGroups(): unknown[] {
    const v = inspect<unknown>('tools.enabledGroups')?.globalValue;
    return Array.isArray(v) ? v : [];
  },
  ledger(): { maxRecords: number; maxAgeMs: number } {
    return { maxRecords: read<number>('ledger.maxRecords', 1000), maxAgeMs: read<number>('ledger.maxAgeDays', 30) * 24 * 3600 * 1000 };
  },
  /**
   * `codespace.review.mode` of a folder: `after` lets patches that `codespace.approvals.patches` would hold for
   * review apply at once (sensitive paths keep their holds), so it is honoured from workspace settings only while
   * the workspace is trusted.
   */
  reviewMode(folder: vscode.ConfigurationScope | undefined): ReviewMode {
    return read<string>('review.mode', 'before', folder, true) === 'after' ? 'after' : 'before';
  },
  review(): { openOnHold: boolean; notify: boolean } {
    return { openOnHold: read<boolean>('review.openOnHold', true) !== false, notify: read<boolean>('review.notify', true) !== false };
  },
  /**
   * `codespace.terminal.environment`: CODESPACE_MCP_URL / CODESPACE_MCP_TOKEN in this window's terminals. This and
   * `discovery.tokenFile` hand out the token: honoured from user settings only, so a workspace cannot turn them
   * back on.
   */
  terminalEnvironment(): boolean {
    return inspect<boolean>('terminal.environment')?.globalValue !== false;
  },
  /** `codespace.discovery.tokenFile`: publish the token for the bridge next to the discovery record. */
  discoveryTokenFile(): boolean {
    return inspect<boolean>('discovery.tokenFile')?.globalValue !== false;
  },
  affects(e: vscode.ConfigurationChangeEvent, key: string): boolean {
    return e.affectsConfiguration(`${SECTION}.${key}`);
  },
};
