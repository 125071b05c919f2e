import * as vscode from 'vscode';
import type { FileContent, FileStat, FindOptions, FindResult, Within, WorkspaceFs } from '../base/workspaceFs';

/**
 * WorkspaceFs for the extension: disk access goes to `disk` (the confined node:fs adapter, wired in by the
 * composition root), file search to `workspace.findFiles`, and unsaved state to the open text documents.
 *
 * Reads and writes do not go through `workspace.fs`: its `rename(…, { overwrite: true })` deletes the target
 * before renaming over it, so a reader can find the file missing and a crash can lose it, and it follows paths
 * again after they were checked. Open editors, the explorer and source control still see every change through
 * VS Code's file watcher, which reports the rename like any other change on disk.
 */
/** The globs of `files.exclude` in effect for the folder at `root` (true entries only). */
function filesExclude(root: string): string[] {
  const map = vscode.workspace.getConfiguration('files', vscode.Uri.file(root)).get<Record<string, unknown>>('exclude') ?? {};
  return Object.entries(map)
    .filter(([, on]) => on === true)
    .map(([glob]) => glob);
}

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

  inspect(p: string, options: Within & { expect: 'file' | 'folder' }): Promise<FileStat> {
    return this.disk.inspect(p, options);
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

  /**
   * The folder's files, as `workspace.findFiles` would list them: the same glob dialect and the folder's
   * `files.exclude`. The walk itself is the confined Node adapter's (linear matcher, never through a linked
   * folder, yielding to the event loop): findFiles in the extension host costs several times a walk (a round trip
   * to the search process and one URI per result), and says nothing about links, so every result had to be
   * resolved again. Excludes with a `when` condition (sibling tests) are not applied.
   */
  find(root: string, pattern: string, options: FindOptions): Promise<FindResult> {
    return this.disk.find(root, pattern, { ...options, ...(options.useExcludes === false ? {} : { excludes: filesExclude(root) }) });
  }

  isDirty(p: string): boolean {
    const target = vscode.Uri.file(p).toString();
    return vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.toString() === target);
  }
}
