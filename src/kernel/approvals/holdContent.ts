import type { ProposalFile } from './hold';

/** Planned content kept in memory across all holds; beyond it the oldest proposals are dropped and re-planned on demand. */
const MAX_PROPOSAL_BYTES = 128 * 1024 * 1024;

/**
 * What the reviewer sees of the holds, in memory only: each hold's planned content (re-planned after a reload, or
 * when dropped to stay under MAX_PROPOSAL_BYTES) and the reviewer's edits of it.
 */
export class HoldContent {
  private readonly proposals = new Map<string, readonly ProposalFile[]>();
  private readonly edits = new Map<string, Map<string, Uint8Array>>();

  proposal(approvalId: string): readonly ProposalFile[] | undefined {
    return this.proposals.get(approvalId);
  }

  /** Keeps a hold's planned content, dropping the oldest others past the memory bound (never this one). */
  keepProposal(approvalId: string, files: readonly ProposalFile[]): void {
    this.proposals.set(approvalId, files);
    let total = 0;
    for (const f of this.proposals.values()) total += proposalBytes(f);
    for (const id of this.proposals.keys()) {
      if (total <= MAX_PROPOSAL_BYTES || id === approvalId) break;
      total -= proposalBytes(this.proposals.get(id) ?? []);
      this.proposals.delete(id);
    }
  }

  /** The planned files with the reviewer's edits in `reviewed`. */
  withEdits(approvalId: string, files: readonly ProposalFile[]): readonly ProposalFile[] {
    const reviewed = this.edits.get(approvalId);
    return files.map((f) => {
      const r = reviewed?.get(f.path);
      return r !== undefined ? { ...f, reviewed: r } : f;
    });
  }

  /** The reviewer's edits of a hold, by section path (empty when unedited). */
  reviewed(approvalId: string): ReadonlyMap<string, Uint8Array> {
    return this.edits.get(approvalId) ?? new Map<string, Uint8Array>();
  }

  /** The reviewer's content of one file; content equal to the proposal is no edit. */
  setReviewed(approvalId: string, path: string, bytes: Uint8Array): void {
    const proposed = this.proposals.get(approvalId)?.find((f) => f.path === path)?.proposed;
    let edits = this.edits.get(approvalId);
    if (proposed !== undefined && bytesEqual(proposed, bytes)) {
      edits?.delete(path);
    } else {
      if (!edits) this.edits.set(approvalId, (edits = new Map()));
      edits.set(path, bytes.slice());
    }
  }

  forget(approvalId: string): void {
    this.proposals.delete(approvalId);
    this.edits.delete(approvalId);
  }
}

function bytesEqual(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function proposalBytes(files: readonly ProposalFile[]): number {
  return files.reduce((n, f) => n + (f.before?.length ?? 0) + (f.proposed?.length ?? 0), 0);
}
