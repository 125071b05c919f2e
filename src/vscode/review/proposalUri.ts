import * as vscode from 'vscode';

/** The one scheme of the review's documents: both sides of every held patch and of every check_only preview. */
export const PROPOSAL_SCHEME = 'codespace-proposal';

export type ProposalSide = 'before' | 'proposed';

/**
 * One side of one file of a patch hold (`approvalId`) or of a check_only preview (`previewId`, always read-only).
 * `path` is workspace-relative with `/` separators; the proposed side of a move is addressed by its destination.
 */
export type ProposalRef =
  | { readonly approvalId: string; readonly previewId?: undefined; readonly side: ProposalSide; readonly path: string }
  | { readonly previewId: string; readonly approvalId?: undefined; readonly side: ProposalSide; readonly path: string };

const SOURCES = ['approval', 'preview'] as const;

function validPath(path: string): boolean {
  if (path === '' || path.startsWith('/') || path.includes('\\') || path.includes('\0')) return false;
  return path.split('/').every((s) => s !== '' && s !== '.' && s !== '..');
}

function validId(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && !id.includes('\0');
}

/**
 * `codespace-proposal://approval/<id>/<side>/<path>` (or `//preview/...`). The file's own name ends the path, so
 * the editor picks the language from it. Throws on anything it could not decode back to the same reference.
 */
export function toProposalUri(ref: ProposalRef): vscode.Uri {
  const source = ref.approvalId !== undefined ? 'approval' : 'preview';
  const id = ref.approvalId ?? ref.previewId;
  if (!validId(id)) throw new Error(`proposal URI: invalid ${source} id ${JSON.stringify(id)}`);
  if (ref.side !== 'before' && ref.side !== 'proposed') throw new Error(`proposal URI: invalid side ${JSON.stringify(ref.side)}`);
  if (!validPath(ref.path)) throw new Error(`proposal URI: invalid path ${JSON.stringify(ref.path)}`);
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, authority: source, path: `/${encodeURIComponent(id)}/${ref.side}/${ref.path}` });
}

/** The reference a proposal URI names, or undefined for any other URI and for anything malformed. */
export function fromProposalUri(uri: vscode.Uri): ProposalRef | undefined {
  if (uri.scheme !== PROPOSAL_SCHEME || uri.query !== '' || uri.fragment !== '') return undefined;
  const source = SOURCES.find((s) => s === uri.authority);
  if (!source) return undefined;
  const m = /^\/([^/]+)\/(before|proposed)\/(.+)$/.exec(uri.path);
  if (!m) return undefined;
  const [, rawId, side, path] = m as unknown as [string, string, ProposalSide, string];
  let id: string;
  try {
    id = decodeURIComponent(rawId);
  } catch {
    return undefined;
  }
  // Only the canonical spelling is accepted, so one file has one URI (the tab and document lookups rely on it).
  if (!validId(id) || encodeURIComponent(id) !== rawId || !validPath(path)) return undefined;
  return source === 'approval' ? { approvalId: id, side, path } : { previewId: id, side, path };
}

/** `approval:<id>` or `preview:<id>`: the review unit a reference belongs to. */
export function unitKey(ref: Pick<ProposalRef, 'approvalId' | 'previewId'>): string {
  return ref.approvalId !== undefined ? `approval:${ref.approvalId}` : `preview:${ref.previewId as string}`;
}
