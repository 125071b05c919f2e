// The part of VS Code's built-in Git extension API (`vscode.git`, getAPI(1)) that the reviewed commit uses. The
// extension ships its full declaration as extensions/git/src/api/git.d.ts in microsoft/vscode; these are the
// members used here, with the same names and shapes.
import * as vscode from 'vscode';

export interface GitChange {
  readonly uri: vscode.Uri;
}

export interface GitRepositoryState {
  readonly indexChanges: readonly GitChange[];
}

export interface GitCommitOptions {
  /** `git commit --no-verify`: the repository's pre-commit and commit-msg hooks do not run. */
  readonly noVerify?: boolean;
}

export interface GitRepository {
  readonly rootUri: vscode.Uri;
  readonly state: GitRepositoryState;
  status(): Promise<void>;
  /** `git add -A -- <paths>` (absolute paths). Never call it with no paths: that stages everything. */
  add(paths: string[]): Promise<void>;
  /** Unstages: `git reset -q HEAD -- <paths>`. */
  revert(paths: string[]): Promise<void>;
  commit(message: string, opts?: GitCommitOptions): Promise<void>;
}

export interface GitApi {
  getRepository(uri: vscode.Uri): GitRepository | null;
  openRepository?(root: vscode.Uri): Promise<GitRepository | null>;
}

interface GitExtensionExports {
  readonly enabled: boolean;
  getAPI(version: 1): GitApi;
}

/** The Git extension's API, or why it is not there. */
export async function gitApi(): Promise<GitApi | string> {
  const ext = vscode.extensions.getExtension<GitExtensionExports>('vscode.git');
  if (!ext) return 'the built-in Git extension (vscode.git) is not installed';
  const exports = ext.isActive ? ext.exports : await ext.activate();
  if (!exports.enabled) return 'the built-in Git extension is disabled (git.enabled is false)';
  return exports.getAPI(1);
}

/** The repository holding `root`, opening it in the Git extension when it has not found it yet. */
export async function gitRepository(api: GitApi, root: vscode.Uri): Promise<GitRepository | undefined> {
  return api.getRepository(root) ?? (await api.openRepository?.(root)) ?? undefined;
}
