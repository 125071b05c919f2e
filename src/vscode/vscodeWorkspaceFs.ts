import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkGlob, compileGlob } from '../core/policy/glob';
import type { FileContent, FileStat, FindOptions, FindResult, Within, WorkspaceFs } from '../core/ports/workspaceFs';

/**
 * WorkspaceFs for the extension: disk access goes to `disk` (the confined node:fs adapter, wired in by the
 * composition root), file search to `workspace.findFiles`, and unsaved state to the open text documents.
 *
 * Reads and writes do not go through `workspace.fs`: its `rename(…, { overwrite: true })` deletes the target
 * before renaming over it, so a reader can find the file missing and a crash can lose it, and it follows paths
 * again after they were checked. Open editors, the explorer and source control still see every change through
 * VS Code's file watcher, which reports the rename like any other change on disk.
 */
export class VsCodeWorkspaceFs implements WorkspaceFs {
  constructor(private readonly disk: WorkspaceFs) {}

  stat(p: string): Promise<FileStat | undefined> {
    return this.disk.stat(p);
  }

  lstat(p: string): Promise<FileStat | undefined> {
    return this.disk.lstat(p);
  }

  realpath(p: string): Promise<string> {
    return this.disk.realpath(p);
  }

  readFile(p: string, options: Within & { maxBytes: number }): Promise<FileContent> {
    return this.disk.readFile(p, options);
  }

  writeFile(p: string, data: Uint8Array, options: Within & { mode?: number; tag: string }): Promise<void> {
    return this.disk.writeFile(p, data, options);
  }

  removeTemp(p: string, tag: string, options: Within): Promise<boolean> {
    return this.disk.removeTemp(p, tag, options);
  }

  deleteFile(p: string, options: Within): Promise<void> {
    return this.disk.deleteFile(p, options);
  }

  removeEmptyFolder(p: string, options: Within): Promise<void> {
    return this.disk.removeEmptyFolder(p, options);
  }

  readLink(p: string): Promise<string> {
    return this.disk.readLink(p);
  }

  createLink(target: string, p: string, options: Within): Promise<void> {
    return this.disk.createLink(target, p, options);
  }

  async find(root: string, pattern: string, options: FindOptions): Promise<FindResult> {
    // VS Code matches results with a backtracking regular expression (src/vs/base/common/glob.ts): one `*` per
    // segment is cheap, but several (`*a*b*c`) can take exponential time on a long name, in this very process. Such
    // patterns go to the editor as a plain superset (their literal folder + `/**`) and are filtered here with the
    // linear matcher; a superset search is bounded, and `truncated` says when the bound cut it.
    const SUPERSET_LIMIT = 200_000;
    const checked = checkGlob(pattern);
    const filter = checked.simple ? undefined : compileGlob(checked.pattern);
    const search = filter === undefined ? checked.pattern : checked.literalPrefix === '' ? '**' : `${checked.literalPrefix}/**`;
    const limit = filter === undefined ? options.maxResults + 1 : SUPERSET_LIMIT;
    const include = new vscode.RelativePattern(vscode.Uri.file(root), search);
    // `undefined` applies files.exclude; `null` applies nothing.
    const uris = await vscode.workspace.findFiles(include, options.useExcludes === false ? null : undefined, limit);
    const paths = uris
      .map((u) => path.relative(root, u.fsPath).split(path.sep).join('/'))
      .filter((rel) => rel !== '' && !rel.startsWith('..') && (filter === undefined || filter(rel)))
      .sort();
    const truncated = paths.length > options.maxResults || (filter !== undefined && uris.length >= limit);
    if (paths.length > options.maxResults) paths.length = options.maxResults;
    return { paths, truncated };
  }

  isDirty(p: string): boolean {
    const target = vscode.Uri.file(p).toString();
    return vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.toString() === target);
  }
}
