import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import type { Stats } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { checkGlob, compileGlob } from '../core/policy/glob';
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
