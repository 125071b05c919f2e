import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { Stats } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkGlob } from '../core/policy/glob';
import type { FileStat, FindOptions, FindResult, WorkspaceFs } from '../core/ports/workspaceFs';

/** A node:fs stat as the port's FileStat, or undefined when nothing is there. */
async function statOrUndefined(get: () => Promise<Stats>): Promise<FileStat | undefined> {
  try {
    const st = await get();
    const type = st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'directory' : st.isFile() ? 'file' : 'other';
    return { type, size: st.size, mtimeMs: st.mtimeMs, mode: st.mode & 0o7777 };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}

/**
 * WorkspaceFs through `vscode.workspace.fs` and `workspace.findFiles`, so open editors, the explorer, source control
 * and file watchers see every change. Stat, symlink and folder questions go to node:fs (workspace.fs has no lstat,
 * realpath or mode); the extension only serves `file:` folders.
 */
export class VsCodeWorkspaceFs implements WorkspaceFs {
  // Stat questions go to node:fs like lstat and realpath: one round trip that also gives the mode a patch keeps.
  stat(p: string): Promise<FileStat | undefined> {
    return statOrUndefined(() => fsp.stat(p));
  }

  lstat(p: string): Promise<FileStat | undefined> {
    return statOrUndefined(() => fsp.lstat(p));
  }

  realpath(p: string): Promise<string> {
    return fsp.realpath(p);
  }

  async readFile(p: string): Promise<Uint8Array> {
    return vscode.workspace.fs.readFile(vscode.Uri.file(p));
  }

  async writeFile(p: string, data: Uint8Array, options: { mode?: number } = {}): Promise<void> {
    const tmp = path.join(path.dirname(p), `.${path.basename(p)}.codespace-${randomBytes(6).toString('hex')}.tmp`);
    const tmpUri = vscode.Uri.file(tmp);
    await vscode.workspace.fs.createDirectory(vscode.Uri.file(path.dirname(p)));
    await vscode.workspace.fs.writeFile(tmpUri, data);
    try {
      if (options.mode !== undefined) await fsp.chmod(tmp, options.mode);
      await vscode.workspace.fs.rename(tmpUri, vscode.Uri.file(p), { overwrite: true });
    } catch (err) {
      await fsp.rm(tmp, { force: true });
      throw err;
    }
  }

  async deleteFile(p: string): Promise<void> {
    await vscode.workspace.fs.delete(vscode.Uri.file(p), { recursive: false, useTrash: false });
  }

  async removeEmptyFolder(p: string): Promise<void> {
    // rmdir refuses a folder that is not empty, which is the guarantee wanted here; the file watcher reports it.
    await fsp.rmdir(p);
  }

  readLink(p: string): Promise<string> {
    return fsp.readlink(p);
  }

  async createLink(target: string, p: string): Promise<void> {
    await fsp.symlink(target, p);
  }

  async find(root: string, pattern: string, options: FindOptions): Promise<FindResult> {
    // The find tool has already checked the pattern (syntax, limits) and collapsed runs of stars. workspace.findFiles
    // hands it to ripgrep, whose glob engine does not backtrack: even `*a*a*…` against long names is answered at once
    // (test/integration/find.test.ts). checkGlob again here keeps the adapter safe on its own.
    const include = new vscode.RelativePattern(vscode.Uri.file(root), checkGlob(pattern).pattern);
    // `undefined` applies files.exclude; `null` applies nothing.
    const uris = await vscode.workspace.findFiles(include, options.useExcludes === false ? null : undefined, options.maxResults + 1);
    const paths = uris
      .map((u) => path.relative(root, u.fsPath).split(path.sep).join('/'))
      .filter((rel) => rel !== '' && !rel.startsWith('..'))
      .sort();
    const truncated = paths.length > options.maxResults;
    if (truncated) paths.length = options.maxResults;
    return { paths, truncated };
  }

  isDirty(p: string): boolean {
    const target = vscode.Uri.file(p).toString();
    return vscode.workspace.textDocuments.some((d) => d.isDirty && d.uri.toString() === target);
  }
}
