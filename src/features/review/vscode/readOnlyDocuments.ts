import * as vscode from 'vscode';

/**
 * The read-only side of a review's diff (a work's baseline, a frozen work's checkpoint, the accepted text of a review
 * after the write), as a file system: each document is what `content` gives, with `times` for its stat; every write
 * is refused, `writeFile` with `writeRefusal` (what the reviewer should do instead). Subclasses fire `emitter` when
 * documents change, so open diffs read them again.
 */
export abstract class ReadOnlyDocuments implements vscode.FileSystemProvider {
  protected readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;

  constructor(private readonly writeRefusal: string) {}

  protected abstract content(uri: vscode.Uri): Uint8Array | Promise<Uint8Array>;

  /** Creation and modification times of a document (milliseconds); 0 unless a subclass knows better. */
  protected times(_uri: vscode.Uri): { ctime: number; mtime: number } {
    return { ctime: 0, mtime: 0 };
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const bytes = await this.content(uri);
    return { type: vscode.FileType.File, ...this.times(uri), size: bytes.byteLength, permissions: vscode.FilePermission.Readonly };
  }

  readFile(uri: vscode.Uri): Uint8Array | Promise<Uint8Array> {
    return this.content(uri);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  writeFile(): void {
    throw vscode.FileSystemError.NoPermissions(this.writeRefusal);
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('CodeSpace: review documents are read-only.');
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions('CodeSpace: review documents are read-only.');
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('CodeSpace: review documents are read-only.');
  }

  dispose(): void {
    this.emitter.dispose();
  }
}
