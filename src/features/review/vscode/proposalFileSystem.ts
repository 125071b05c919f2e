import * as vscode from 'vscode';
import type { Approvals, HoldView, ProposalFile } from '../../../kernel/approvals/hold';
import { hasReviewFiles } from '../../../kernel/approvals/hold';
import { ToolError } from '../../../base/errors';
import { binaryDescription, isReviewText, sideInfo } from '../common/reviewedContent';
import type { Activity } from '../../../kernel/runner/events';
import type { ProposalRef } from './proposalUri';
import { fromProposalUri, toProposalUri } from './proposalUri';
import { reviewDocuments } from './reviewDocuments';
import { describeError } from '../../../base/describeError';

const EMPTY = new Uint8Array(0);

function message(err: unknown): string {
  return describeError(err);
}

/** The file of a unit a reference names: the source path on the left, the destination (of a move) on the right. */
function fileOf(files: readonly ProposalFile[], ref: ProposalRef): ProposalFile | undefined {
  return files.find((f) => (ref.side === 'before' ? f.path : (f.move_to ?? f.path)) === ref.path);
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a === b) return true;
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** A file of a hold that is not text on either side (a binary file the patch deletes or moves): shown as described, never edited. */
export function isBinaryProposal(file: ProposalFile): boolean {
  return [file.before, file.reviewed ?? file.proposed].some((b) => b !== undefined && !isReviewText(b));
}

function bytesOf(file: ProposalFile, ref: ProposalRef): Uint8Array {
  const bytes = ref.side === 'before' ? file.before : (file.reviewed ?? file.proposed);
  if (!isBinaryProposal(file)) return bytes ?? EMPTY;
  // Binary: each side says so (size, sha256) instead of showing bytes as text.
  return new TextEncoder().encode(binaryDescription(ref.side === 'before' ? file.path : (file.move_to ?? file.path), bytes === undefined ? null : sideInfo(bytes)));
}

/** Both URIs of every file of a hold, as the diff editors open them. */
export function holdUris(hold: Pick<HoldView, 'approval_id' | 'files'>): vscode.Uri[] {
  const out: vscode.Uri[] = [];
  for (const f of hold.files ?? []) {
    out.push(toProposalUri({ approvalId: hold.approval_id, side: 'before', path: f.path }));
    out.push(toProposalUri({ approvalId: hold.approval_id, side: 'proposed', path: f.move_to ?? f.path }));
  }
  return out;
}

/**
 * The review documents of holds and previews (kinds `approval` and `preview` of reviewDocuments.ts). The left side
 * (the file as it was when the hold was made) and every preview are read-only; the right side of a pending patch
 * hold is the reviewer's to edit, and saving it hands the bytes to `approvals.setReviewed`, so what is granted is
 * what the reviewer saw. Deleted files read as empty on the right, added files as empty on the left.
 */
export class ProposalFileSystem implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.emitter.event;
  /** Proposal content per hold, read once per change of the hold. */
  private readonly proposals = new Map<string, Promise<readonly ProposalFile[]>>();
  /**
   * What each document last read as, and since when: its mtime moves only when its own bytes change. A hold changes
   * for many reasons (another file's edit, a state change); moving the mtime of every document of it on each would
   * make VS Code refuse to save a reviewer's pending edit of an unchanged one as "the file is newer".
   */
  private readonly served = new Map<string, { readonly bytes: Uint8Array; readonly mtime: number }>();

  constructor(
    private readonly approvals: Approvals,
    private readonly activity: Activity,
  ) {}

  /** Serves the holds' and previews' documents of the review scheme (writability is decided per URI). */
  register(): vscode.Disposable {
    return reviewDocuments.serve(['approval', 'preview'], this);
  }

  /**
   * A hold was created, changed state or its reviewed content changed: open documents of it read again. A decided
   * hold's documents are not re-read (the service no longer shows its proposal, and its tabs are closing): the
   * last content read stays readable for a minute.
   */
  holdChanged(hold: HoldView): void {
    if (!hasReviewFiles(hold)) return;
    if (hold.state !== 'pending' && hold.state !== 'stale') {
      const last = this.proposals.get(hold.approval_id);
      setTimeout(() => {
        if (last && this.proposals.get(hold.approval_id) === last) this.proposals.delete(hold.approval_id);
        for (const uri of holdUris(hold)) this.served.delete(uri.toString());
      }, 60_000).unref?.();
      return;
    }
    this.proposals.delete(hold.approval_id);
    this.emitter.fire(holdUris(hold).map((uri) => ({ type: vscode.FileChangeType.Changed, uri })));
  }

  /** The mtime of a document that reads as `bytes` now: unchanged while its bytes are, later once they change. */
  private mtimeOf(uri: vscode.Uri, bytes: Uint8Array, created: number): number {
    const key = uri.toString();
    const last = this.served.get(key);
    if (last && sameBytes(last.bytes, bytes)) return last.mtime;
    const mtime = last ? Math.max(Date.now(), last.mtime + 1) : Number.isFinite(created) ? created : Date.now();
    this.served.set(key, { bytes, mtime });
    return mtime;
  }

  private parse(uri: vscode.Uri): ProposalRef {
    const ref = fromProposalUri(uri);
    if (!ref) throw vscode.FileSystemError.FileNotFound(uri);
    return ref;
  }

  private proposalOf(approvalId: string): Promise<readonly ProposalFile[]> {
    let p = this.proposals.get(approvalId);
    if (!p) {
      p = this.approvals.proposal(approvalId);
      this.proposals.set(approvalId, p);
      p.catch(() => {
        if (this.proposals.get(approvalId) === p) this.proposals.delete(approvalId);
      });
    }
    return p;
  }

  private async filesOf(ref: ProposalRef, uri: vscode.Uri): Promise<readonly ProposalFile[]> {
    if (ref.previewId !== undefined) {
      const files = this.activity.preview(ref.previewId);
      if (!files) throw vscode.FileSystemError.Unavailable(`CodeSpace: preview ${ref.previewId} is no longer kept (only the latest previews are).`);
      return files;
    }
    const hold = this.approvals.get(ref.approvalId);
    if (!hold) throw vscode.FileSystemError.FileNotFound(uri);
    const last = this.proposals.get(ref.approvalId);
    if (last && hold.state !== 'pending' && hold.state !== 'stale') return last;
    try {
      return await this.proposalOf(ref.approvalId);
    } catch (err) {
      if (ToolError.is(err, 'APPROVAL_CONFLICT')) throw vscode.FileSystemError.Unavailable(`CodeSpace: hold ${ref.approvalId} is ${hold.state}; its proposal is no longer shown.`);
      throw vscode.FileSystemError.Unavailable(`CodeSpace: the proposal of hold ${ref.approvalId} could not be read: ${message(err)}`);
    }
  }

  private async resolve(uri: vscode.Uri): Promise<{ ref: ProposalRef; file: ProposalFile }> {
    const ref = this.parse(uri);
    const file = fileOf(await this.filesOf(ref, uri), ref);
    if (!file) throw vscode.FileSystemError.FileNotFound(uri);
    return { ref, file };
  }

  /** Only the right side of an add, update or move of a pending hold takes edits. */
  private writable(ref: ProposalRef, file: ProposalFile): boolean {
    if (ref.approvalId === undefined || ref.side !== 'proposed' || file.kind === 'delete' || isBinaryProposal(file)) return false;
    return this.approvals.get(ref.approvalId)?.state === 'pending';
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const ref = this.parse(uri);
    const files = await this.filesOf(ref, uri);
    const file = fileOf(files, ref);
    if (!file) {
      // A folder above a file of the unit (workspace.fs creates parents before it writes).
      const isDir = files.some((f) => (ref.side === 'before' ? f.path : (f.move_to ?? f.path)).startsWith(`${ref.path}/`));
      if (!isDir) throw vscode.FileSystemError.FileNotFound(uri);
      return { type: vscode.FileType.Directory, ctime: 0, mtime: 0, size: 0, permissions: vscode.FilePermission.Readonly };
    }
    const created = ref.approvalId !== undefined ? Date.parse(this.approvals.get(ref.approvalId)?.created_at ?? '') : NaN;
    const bytes = bytesOf(file, ref);
    const stat: vscode.FileStat = {
      type: vscode.FileType.File,
      ctime: Number.isFinite(created) ? created : 0,
      mtime: this.mtimeOf(uri, bytes, created),
      size: bytes.byteLength,
    };
    if (!this.writable(ref, file)) stat.permissions = vscode.FilePermission.Readonly;
    return stat;
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    const { ref, file } = await this.resolve(uri);
    return bytesOf(file, ref);
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    const ref = this.parse(uri);
    if (ref.approvalId === undefined) throw vscode.FileSystemError.NoPermissions('CodeSpace: a preview is read-only.');
    if (ref.side === 'before') throw vscode.FileSystemError.NoPermissions('CodeSpace: the left side shows the file as it was; edit the proposal on the right.');
    const hold = this.approvals.get(ref.approvalId);
    if (!hold) throw vscode.FileSystemError.FileNotFound(uri);
    if (hold.state !== 'pending') throw vscode.FileSystemError.NoPermissions(`CodeSpace: hold ${hold.approval_id} is ${hold.state}; its proposal can no longer be edited.`);
    const { file } = await this.resolve(uri);
    if (file.kind === 'delete') throw vscode.FileSystemError.NoPermissions('CodeSpace: a deleted file has no proposal to edit.');
    if (isBinaryProposal(file)) throw vscode.FileSystemError.NoPermissions('CodeSpace: a binary file is shown as described (size, sha256), not as text; it cannot be edited here. Approve or deny the hold.');
    try {
      // The service keys edits by the section path (a move: its source), the URI by what the right side shows.
      this.approvals.setReviewed(ref.approvalId, file.path, content);
    } catch (err) {
      if (ToolError.is(err, 'APPROVAL_CONFLICT') || ToolError.is(err, 'INVALID_ARGUMENTS')) throw vscode.FileSystemError.NoPermissions(`CodeSpace: ${message(err)}`);
      throw vscode.FileSystemError.Unavailable(`CodeSpace: the edit could not be kept: ${message(err)}`);
    }
    // setReviewed fires onDidChange (holdChanged); this covers a service that reports it later. The next stat sees
    // the new bytes and moves this document's mtime.
    this.proposals.delete(ref.approvalId);
  }

  watch(): vscode.Disposable {
    // Changes are pushed for every document of a hold whenever it changes (holdChanged).
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('CodeSpace: proposal documents cannot be created.');
  }

  delete(): void {
    throw vscode.FileSystemError.NoPermissions('CodeSpace: proposal documents cannot be deleted; deny the hold instead.');
  }

  rename(): void {
    throw vscode.FileSystemError.NoPermissions('CodeSpace: proposal documents cannot be renamed.');
  }

  dispose(): void {
    this.emitter.dispose();
    this.proposals.clear();
    this.served.clear();
  }
}
