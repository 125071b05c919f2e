import * as vscode from 'vscode';
import { isCanonicalPath } from '../../../base/paths';

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

/**
 * A workspace-relative path any tool takes, in its one spelling (`/` separators, no empty, `.` or `..` segment):
 * the shared names policy, so every name a tool shows (a backslash, a newline, `#`, `?`, `%`) has a review URI.
 */
export function validPath(path: string): boolean {
  return isCanonicalPath(path);
}

/**
 * The id inside the authority, which URIs compare and print in lower case: `[a-z0-9_-]` stay, every other UTF-16
 * unit is `~` and four lower-case hex digits, so any id survives and has exactly one spelling.
 */
export function encodeId(id: string): string {
  let out = '';
  for (let i = 0; i < id.length; i++) {
    const c = id.charAt(i);
    out += /[a-z0-9_-]/.test(c) ? c : `~${id.charCodeAt(i).toString(16).padStart(4, '0')}`;
  }
  return out;
}

export function decodeId(raw: string): string | undefined {
  if (!/^(?:[a-z0-9_-]|~[0-9a-f]{4})+$/.test(raw)) return undefined;
  return raw.replace(/~([0-9a-f]{4})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function validId(id: unknown): id is string {
  return typeof id === 'string' && id !== '' && !id.includes('\0');
}

/**
 * `codespace-proposal://<side>.<approval|preview>.<id>/<path>`. Both sides of a file share the path (the workspace
 * path of the file; the destination on the right of a move), so the multi-file diff editor, which flags a rename
 * whenever the two paths differ, names a file as the workspace does and flags only real moves; the file's own name
 * ends the path, so the editor picks the language from it. Throws on anything it could not decode back to the
 * same reference.
 */
export function toProposalUri(ref: ProposalRef): vscode.Uri {
  const source = ref.approvalId !== undefined ? 'approval' : 'preview';
  const id = ref.approvalId ?? ref.previewId;
  if (!validId(id)) throw new Error(`proposal URI: invalid ${source} id ${JSON.stringify(id)}`);
  if (ref.side !== 'before' && ref.side !== 'proposed') throw new Error(`proposal URI: invalid side ${JSON.stringify(ref.side)}`);
  if (!validPath(ref.path)) throw new Error(`proposal URI: invalid path ${JSON.stringify(ref.path)}`);
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, authority: `${ref.side}.${source}.${encodeId(id)}`, path: `/${ref.path}` });
}

/** The reference a proposal URI names, or undefined for any other URI and for anything malformed. */
export function fromProposalUri(uri: vscode.Uri): ProposalRef | undefined {
  if (uri.scheme !== PROPOSAL_SCHEME || uri.query !== '' || uri.fragment !== '') return undefined;
  const m = /^(before|proposed)\.(approval|preview)\.(.+)$/.exec(uri.authority);
  if (!m || !uri.path.startsWith('/')) return undefined;
  const [, side, source, rawId] = m as unknown as [string, ProposalSide, 'approval' | 'preview', string];
  const path = uri.path.slice(1);
  const id = decodeId(rawId);
  // Only the canonical spelling is accepted, so one file has one URI (the tab and document lookups rely on it).
  if (id === undefined || !validId(id) || encodeId(id) !== rawId || !validPath(path)) return undefined;
  return source === 'approval' ? { approvalId: id, side, path } : { previewId: id, side, path };
}

/** `approval:<id>` or `preview:<id>`: the review unit a reference belongs to. */
export function unitKey(ref: Pick<ProposalRef, 'approvalId' | 'previewId'>): string {
  return ref.approvalId !== undefined ? `approval:${ref.approvalId}` : `preview:${ref.previewId as string}`;
}
