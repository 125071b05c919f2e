import * as vscode from 'vscode';
import type { NewRepositoryExposure } from '../common/commandIsolation';

/**
 * The settings with which VS Code's git extension opens, by itself, a repository that was not there before: a
 * `.git` change seen by its file watcher, a subfolder scan or an open editor (`git.autoRepositoryDetection`
 * anything but false), and the submodules `.gitmodules` lists (`git.detectSubmodules`). CodeSpace's
 * `configurationDefaults` make both false; a developer's own value (user settings, a workspace file) wins.
 */
const CLOSED: readonly (readonly [string, unknown])[] = [
  ['autoRepositoryDetection', false],
  ['detectSubmodules', false],
];

/** What no setting covers, whatever the git extension does. */
const REMAINING = [
  'a shell of yours that runs git in a repository a command created (a prompt showing the branch after `cd` into it) runs its configuration',
  'other extensions that run git in subfolders by themselves',
  'with codespace.exec.gitWrites "commit", a command can record a repository it created as a submodule of the workspace repository (its index is writable), and git status there then looks into it',
];

/** Where the git extension would open new repositories by itself, read now for each workspace folder. */
export function newRepositoryExposure(): NewRepositoryExposure {
  const scopes: (vscode.Uri | undefined)[] = [undefined, ...(vscode.workspace.workspaceFolders ?? []).map((f) => f.uri)];
  const settings: Record<string, unknown> = {};
  const open: string[] = [];
  for (const scope of scopes) {
    const git = vscode.workspace.getConfiguration('git', scope);
    if (git.get<boolean>('enabled') === false) continue;
    for (const [key, closed] of CLOSED) {
      const value = git.get<unknown>(key);
      settings[`git.${key}`] ??= value;
      if (value !== closed && !open.includes(`git.${key}`)) open.push(`git.${key}`);
    }
  }
  if (open.length === 0) return { editor_git: 'closed', settings, remaining: REMAINING };
  return {
    editor_git: 'open',
    settings,
    reason: `${open.join(' and ')} ${open.length > 1 ? 'are' : 'is'} not false, so VS Code's git extension opens a repository a command creates and runs git there with that repository's configuration (core.fsmonitor, hooks...).`,
    remaining: REMAINING,
  };
}
