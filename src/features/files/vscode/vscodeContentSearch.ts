import * as vscode from 'vscode';
import type { SearchSettings } from '../common/contentSearch';
import { bundledRipgrepCandidates } from './ripgrepLocations';

export { bundledRipgrepCandidates };

/** The globs set to true in one exclude setting (entries with a `when` clause are left to the editor). */
function trueGlobs(section: string, uri: vscode.Uri): string[] {
  const map = vscode.workspace.getConfiguration(section, uri).get<Record<string, unknown>>('exclude') ?? {};
  return Object.entries(map)
    .filter(([, on]) => on === true)
    .map(([glob]) => glob);
}

/** The search settings VS Code's own search applies to the folder at `root`. */
export function editorSearchSettings(root: string): SearchSettings {
  const uri = vscode.Uri.file(root);
  const search = vscode.workspace.getConfiguration('search', uri);
  return {
    excludes: [...new Set([...trueGlobs('files', uri), ...trueGlobs('search', uri)])],
    useIgnoreFiles: search.get<boolean>('useIgnoreFiles', true),
    useParentIgnoreFiles: search.get<boolean>('useParentIgnoreFiles', false),
    followSymlinks: search.get<boolean>('followSymlinks', true),
  };
}

/**
 * What content search runs on in the editor: where VS Code's own ripgrep may be (the Node adapter runs the first
 * executable one, or reports the reason) and the folder's search settings. The composition root hands this to the
 * Node ripgrep adapter.
 */
export function editorRipgrep(): { candidates: string[]; source: 'vscode'; settings: (root: string) => SearchSettings; missingReason: string } {
  const candidates = bundledRipgrepCandidates(vscode.env.appRoot);
  return {
    candidates,
    source: 'vscode',
    settings: editorSearchSettings,
    missingReason: `VS Code's ripgrep was not found (looked for ${candidates.join(', ')}).`,
  };
}
