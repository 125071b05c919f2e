import type * as vscode from 'vscode';
import { isCanonicalPath } from '../../../base/paths';
import { fromReviewUri, toReviewUri } from './reviewDocuments';

export type ProposalSide = 'before' | 'proposed';

/**
 * One side of one file of a patch hold (`approvalId`) or of a check_only preview (`previewId`, always read-only).
 * `path` is workspace-relative with `/` separators; the proposed side of a move is addressed by its destination.
 */
export type ProposalRef =
  | { readonly approvalId: string; readonly previewId?: undefined; readonly side: ProposalSide; readonly path: string }
  | { readonly previewId: string; readonly approvalId?: undefined; readonly side: ProposalSide; readonly path: string };

/**
 * A workspace-relative path any tool takes, in its one spelling (`/` separators, no empty, `.` or `..` segment):
 * the shared names policy, so every name a tool shows (a backslash, a newline, `#`, `?`, `%`) has a review URI.
 */
export function validPath(path: string): boolean {
  return isCanonicalPath(path);
}

/**
 * `codespace-review://<approval|preview>.<side>.<id>/<path>` (reviewDocuments.ts). Both sides of a file share the
 * path (the workspace path of the file; the destination on the right of a move), so the multi-file diff editor,
 * which flags a rename whenever the two paths differ, names a file as the workspace does and flags only real moves;
 * the file's own name ends the path, so the editor picks the language from it. Throws on anything it could not
 * decode back to the same reference.
 */
export function toProposalUri(ref: ProposalRef): vscode.Uri {
  const kind = ref.approvalId !== undefined ? 'approval' : 'preview';
  if (ref.side !== 'before' && ref.side !== 'proposed') throw new Error(`proposal URI: invalid side ${JSON.stringify(ref.side)}`);
  if (!validPath(ref.path)) throw new Error(`proposal URI: invalid path ${JSON.stringify(ref.path)}`);
  return toReviewUri({ kind, side: ref.side, id: (ref.approvalId ?? ref.previewId) as string, path: `/${ref.path}` });
}

/** The reference a proposal URI names, or undefined for any other URI and for anything malformed. */
export function fromProposalUri(uri: vscode.Uri): ProposalRef | undefined {
  const ref = fromReviewUri(uri);
  if (!ref || (ref.kind !== 'approval' && ref.kind !== 'preview') || (ref.side !== 'before' && ref.side !== 'proposed')) return undefined;
  const path = ref.path.slice(1);
  if (!validPath(path)) return undefined;
  const side: ProposalSide = ref.side;
  return ref.kind === 'approval' ? { approvalId: ref.id, side, path } : { previewId: ref.id, side, path };
}

/** `approval:<id>` or `preview:<id>`: the review unit a reference belongs to. */
export function unitKey(ref: Pick<ProposalRef, 'approvalId' | 'previewId'>): string {
  return ref.approvalId !== undefined ? `approval:${ref.approvalId}` : `preview:${ref.previewId as string}`;
}
