import * as vscode from 'vscode';
import type { ApprovalPolicy } from '../core/approvals/approvalService';
import { DEFAULT_APPROVAL_POLICY } from '../core/approvals/approvalService';
import type { Profile } from '../core/ports/workspaceSource';
import type { Limits } from '../core/tools/tool';
import { DEFAULT_LIMITS } from '../core/tools/tool';

export const SECTION = 'codespace';

/**
 * Reads a setting. Settings that relax safety are honoured from user (global) scope only while the workspace
 * is untrusted, so a cloned repository's .vscode/settings.json cannot widen what agents may do.
 */
function read<T>(key: string, fallback: T, scope?: vscode.ConfigurationScope, safetyRelevant = false): T {
  const config = vscode.workspace.getConfiguration(SECTION, scope);
  if (safetyRelevant && !vscode.workspace.isTrusted) {
    const inspected = config.inspect<T>(key);
    return inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
  }
  return config.get<T>(key, fallback);
}

const PATCH_STRICTNESS = ['off', 'sensitive', 'confirm'] as const;
const COMMAND_STRICTNESS = ['off', 'confirm'] as const;

/**
 * An approval setting: the user's (global) value, or the default. A workspace or folder value is honoured only
 * when it is stricter, so a cloned repository's .vscode/settings.json can ask for more review, never for less.
 */
function strictest<T extends string>(key: string, order: readonly T[], fallback: T): T {
  const inspected = vscode.workspace.getConfiguration(SECTION).inspect<string>(key);
  const rank = (v: unknown): number => order.indexOf(v as T);
  let best: T = rank(inspected?.globalValue) >= 0 ? (inspected?.globalValue as T) : fallback;
  for (const v of [inspected?.workspaceValue, inspected?.workspaceFolderValue]) if (rank(v) > rank(best)) best = v as T;
  return best;
}

export const settings = {
  /** Approval settings, honoured from user settings only (a workspace may only make them stricter). */
  approvals(): ApprovalPolicy {
    const agent = vscode.workspace.getConfiguration(SECTION).inspect<boolean>('approvals.agentMayResolve');
    return {
      patches: strictest('approvals.patches', PATCH_STRICTNESS, DEFAULT_APPROVAL_POLICY.patches),
      commands: strictest('approvals.commands', COMMAND_STRICTNESS, DEFAULT_APPROVAL_POLICY.commands),
      // Relaxes safety: from user settings only, and a workspace value of false still wins.
      agentMayResolve: agent?.globalValue === true && agent.workspaceValue !== false && agent.workspaceFolderValue !== false,
    };
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
  ledger(): { maxRecords: number; maxAgeMs: number } {
    return { maxRecords: read<number>('ledger.maxRecords', 1000), maxAgeMs: read<number>('ledger.maxAgeDays', 30) * 24 * 3600 * 1000 };
  },
  review(): { openOnHold: boolean; notify: boolean } {
    return { openOnHold: read<boolean>('review.openOnHold', true) !== false, notify: read<boolean>('review.notify', true) !== false };
  },
  affects(e: vscode.ConfigurationChangeEvent, key: string): boolean {
    return e.affectsConfiguration(`${SECTION}.${key}`);
  },
};
