import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { Approvals, HoldView } from '../../../kernel/approvals/hold';
import type { Logger } from '../../../base/logger';
import type { CommentSide, ReviewComment } from '../../../kernel/approvals/reviewComments';
import { checkReviewComments } from '../../../kernel/approvals/reviewComments';
import { COMMANDS } from '../../../kernel/vscode/commandIds';
import { fromProposalUri } from './proposalUri';
import { describeError } from '../../../base/describeError';

/** The comment controller's id (package.json's menus name it in `commentController == …`). */
export const COMMENT_CONTROLLER_ID = 'codespace.review';
/** workspaceState key of the comments written but not sent yet. */
const STORE_KEY = 'codespace.review.draftComments';
/** Comments kept unsent, over all reviews (the oldest go first beyond it). */
const MAX_DRAFTS = 1000;

/** Where a set of comments goes: `approval:<id>` (a held patch: Request Changes) or `work:<id>` (a steering instruction). */
export type CommentTarget = `approval:${string}` | `work:${string}`;

/** A comment written in a review and not sent yet, as kept in workspaceState. */
interface DraftComment {
  readonly id: string;
  readonly target: CommentTarget;
  /** The document it was written on (a proposal, or a file of a work review). */
  readonly uri: string;
  readonly path: string;
  /** Absent in comments kept before sides existed: `new`. */
  readonly side?: CommentSide;
  readonly start_line: number;
  readonly end_line: number;
  readonly quoted: string;
  readonly body: string;
  readonly created_at: string;
}

/**
 * Where the document of a URI is reviewed, when it is: the target its comments go to, its workspace path and the side
 * of the diff it is (`old`: the file before the change, `new`: after it). A side with no file on it (the right side
 * of a deleted file, the left of an added one) takes no comments: undefined.
 */
export type CommentLocator = (uri: vscode.Uri) => { target: CommentTarget; path: string; side: CommentSide } | undefined;

export interface ReviewCommentsDeps {
  readonly approvals: Approvals;
  readonly log: Logger;
  readonly state: vscode.Memento;
  /** Other review surfaces (a work review's files): where their documents' comments go. */
  readonly locateWork?: CommentLocator;
  /** Sends a work's comments as one steering instruction; returns the instruction id. */
  readonly sendToWork?: (workId: string, comments: readonly ReviewComment[]) => Promise<string>;
}

/** What the send commands return (to a test, or to a caller that wants to know). */
export interface CommentsSent {
  readonly ok: boolean;
  readonly target?: CommentTarget;
  readonly comments?: number;
  readonly instruction_id?: string;
  /** NO_COMMENTS, NOT_FOUND, APPROVAL_CONFLICT, VERSION_CONFLICT, INVALID_ARGUMENTS, CANCELLED, ... */
  readonly code?: string;
  readonly message?: string;
}

/** For the in-editor tests: comments through the same path as the comment widget, and a reload's restore. */
export interface ReviewCommentsForTests {
  /** Writes a comment on lines `start`..`end` (1-based) of `uri`, as the widget's Add Comment does. */
  add(uri: vscode.Uri, start: number, end: number, body: string): Promise<void>;
  /** The unsent comments, per target, as they would be sent (checked, in path, side and line order). */
  drafts(target: CommentTarget): ReviewComment[];
  /** The threads shown now: document, 1-based lines, bodies. */
  threads(): { uri: string; start_line: number; end_line: number; bodies: string[] }[];
  /** Drops every thread and reads the unsent comments back from workspaceState, as a window reload does. */
  reload(): void;
}

function errorCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function errorMessage(err: unknown): string {
  return describeError(err);
}

function toComment(d: DraftComment): ReviewComment {
  return { path: d.path, side: d.side ?? 'new', range: { start_line: d.start_line, end_line: d.end_line }, quoted: d.quoted, body: d.body };
}

/** A comment of the widget: the reviewer's text as written (plain text: nothing in it is run or linked). */
class DraftView implements vscode.Comment {
  readonly mode = vscode.CommentMode.Preview;
  readonly author: vscode.CommentAuthorInformation = { name: 'You (not sent yet)' };
  readonly contextValue = 'codespace-draft';
  readonly body: vscode.MarkdownString;
  readonly timestamp: Date;
  constructor(readonly draft: DraftComment) {
    this.body = new vscode.MarkdownString();
    this.body.appendText(draft.body);
    this.timestamp = new Date(draft.created_at);
  }
}

/**
 * Line comments in the review documents, with VS Code's comments UI: a comment controller whose commenting ranges are
 * the proposal side of every pending patch hold (and the files of an open work review), the widget's Add Comment,
 * and the commands that send a review's comments at once: Request Changes for a held patch (the hold ends with the
 * comments, nothing is written), Send Comments to Agent for a work (one steering instruction). Comments not sent are
 * kept in workspaceState and shown again after a window reload, as long as their review is still open to them.
 */
export function registerReviewComments(deps: ReviewCommentsDeps): { disposables: vscode.Disposable[]; forTests: ReviewCommentsForTests } {
  const { approvals, log, state } = deps;
  const controller = vscode.comments.createCommentController(COMMENT_CONTROLLER_ID, 'CodeSpace review');
  controller.options = { prompt: 'Comment for the agent', placeHolder: 'What should the agent change here? (sent with Request Changes)' };
  let drafts: DraftComment[] = [];
  /** Draft id → its thread (one thread per comment range; replies in a thread are further comments of it). */
  const threads = new Map<vscode.CommentThread, DraftComment[]>();

  const pendingHold = (approvalId: string): HoldView | undefined => {
    const h = approvals.get(approvalId);
    return h && h.state === 'pending' && h.files !== undefined ? h : undefined;
  };

  const locate: CommentLocator = (uri) => {
    const ref = fromProposalUri(uri);
    if (ref) {
      const hold = ref.approvalId !== undefined ? pendingHold(ref.approvalId) : undefined;
      if (!hold) return undefined;
      // Either side of a held patch's diff: the file before it (a move's source path) and the proposal (a move's
      // destination); the side of a file that has none (an added file's before, a deleted file's proposal) takes none.
      const side: CommentSide = ref.side === 'before' ? 'old' : 'new';
      const file = hold.files?.find((f) => (side === 'old' ? f.path === ref.path && f.kind !== 'add' : (f.move_to ?? f.path) === ref.path && f.kind !== 'delete'));
      return file ? { target: `approval:${hold.approval_id}`, path: ref.path, side } : undefined;
    }
    return deps.locateWork?.(uri);
  };

  /** A held patch's comments live while it is pending; a work's until they are sent (its review reopens after a reload). */
  const live = (d: DraftComment): boolean => (d.target.startsWith('approval:') ? pendingHold(d.target.slice('approval:'.length)) !== undefined : d.target.startsWith('work:'));

  const persist = (): void => {
    if (drafts.length > MAX_DRAFTS) drafts = drafts.slice(drafts.length - MAX_DRAFTS);
    state.update(STORE_KEY, drafts).then(undefined, (err: unknown) => log.error('[review] keeping the unsent comments failed', errorMessage(err)));
  };

  const showThread = (uri: vscode.Uri, items: DraftComment[], existing?: vscode.CommentThread): vscode.CommentThread => {
    const first = items[0] as DraftComment;
    const range = new vscode.Range(first.start_line - 1, 0, first.end_line - 1, 0);
    const thread = existing ?? controller.createCommentThread(uri, range, []);
    thread.comments = items.map((d) => new DraftView(d));
    thread.label = items.length === 1 ? 'Comment for the agent, not sent yet' : `${items.length} comments for the agent, not sent yet`;
    thread.contextValue = first.target.startsWith('work:') ? 'codespace-draft-work' : 'codespace-draft-approval';
    thread.canReply = true;
    thread.collapsibleState = vscode.CommentThreadCollapsibleState.Expanded;
    threads.set(thread, items);
    return thread;
  };

  const quote = async (uri: vscode.Uri, start: number, end: number): Promise<string> => {
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString()) ?? (await vscode.workspace.openTextDocument(uri));
    // A range past the document's end would reach the agent as an empty quote: refused, nothing kept.
    if (start > doc.lineCount) throw new Error(`line ${start} is past the end of ${doc.uri.path} (${doc.lineCount} lines).`);
    const lines: string[] = [];
    for (let l = start - 1; l <= Math.min(end - 1, doc.lineCount - 1); l++) lines.push(doc.lineAt(l).text);
    return lines.join('\n');
  };

  /** The widget's Add Comment (and a reply in a thread): one comment on the thread's lines. */
  const addComment = async (thread: vscode.CommentThread, text: string): Promise<void> => {
    // A reply goes where the thread's comments go (a work's thread restored after a reload, before its review reopens).
    const known = threads.get(thread)?.[0];
    const at = known ? { target: known.target, path: known.path, side: known.side ?? 'new' } : locate(thread.uri);
    if (!at) {
      threads.delete(thread);
      thread.dispose();
      void vscode.window.showWarningMessage('CodeSpace: this document is no longer under review; the comment was not kept.');
      return;
    }
    const range = thread.range ?? new vscode.Range(0, 0, 0, 0);
    const start = range.start.line + 1;
    // A new thread from a selection that ends at the start of a line does not include that line; a thread made here
    // (restored, or by the tests) spans exactly its lines.
    const end = Math.max(start, range.end.character === 0 && range.end.line > range.start.line && !threads.has(thread) ? range.end.line : range.end.line + 1);
    // The text exactly as typed (leading spaces of indented code, tabs, CR LF, any Unicode): the agent reads it so.
    const [checked] = checkReviewComments([{ path: at.path, side: at.side, range: { start_line: start, end_line: end }, quoted: await quote(thread.uri, start, end), body: text }]);
    const c = checked as ReviewComment;
    const draft: DraftComment = {
      id: `rc_${randomBytes(6).toString('hex')}`,
      target: at.target,
      uri: thread.uri.toString(),
      path: c.path,
      side: c.side ?? 'new',
      start_line: c.range.start_line,
      end_line: c.range.end_line,
      quoted: c.quoted,
      body: c.body,
      created_at: new Date().toISOString(),
    };
    drafts.push(draft);
    persist();
    showThread(thread.uri, [...(threads.get(thread) ?? []), draft], thread);
  };

  const onReply = async (reply: vscode.CommentReply): Promise<void> => {
    try {
      await addComment(reply.thread, reply.text);
    } catch (err) {
      void vscode.window.showErrorMessage(`CodeSpace: the comment was not added: ${errorMessage(err)}`);
    }
  };

  const dropThread = (thread: vscode.CommentThread): void => {
    const items = threads.get(thread) ?? [];
    drafts = drafts.filter((d) => !items.includes(d));
    threads.delete(thread);
    thread.dispose();
    persist();
  };

  const deleteComment = (comment: DraftView): void => {
    for (const [thread, items] of threads) {
      if (!items.includes(comment.draft)) continue;
      const rest = items.filter((d) => d !== comment.draft);
      drafts = drafts.filter((d) => d !== comment.draft);
      persist();
      if (rest.length === 0) {
        threads.delete(thread);
        thread.dispose();
      } else showThread(thread.uri, rest, thread);
      return;
    }
  };

  /** Forgets a target's comments (sent, or its review ended) and closes their threads. */
  const clear = (target: CommentTarget): void => {
    drafts = drafts.filter((d) => d.target !== target);
    for (const [thread, items] of [...threads]) {
      if (items.some((d) => d.target === target)) {
        threads.delete(thread);
        thread.dispose();
      }
    }
    persist();
  };

  const restore = (): void => {
    for (const thread of threads.keys()) thread.dispose();
    threads.clear();
    const kept = state.get<DraftComment[]>(STORE_KEY, []);
    drafts = Array.isArray(kept) ? kept.filter((d) => typeof d?.uri === 'string' && typeof d.target === 'string' && live(d)) : [];
    if (drafts.length !== (Array.isArray(kept) ? kept.length : 0)) persist();
    const groups = new Map<string, DraftComment[]>();
    for (const d of drafts) {
      const key = `${d.uri}#${d.start_line}-${d.end_line}`;
      groups.set(key, [...(groups.get(key) ?? []), d]);
    }
    for (const items of groups.values()) showThread(vscode.Uri.parse((items[0] as DraftComment).uri), items);
  };

  /** The target a send command acts on: its argument (an approval id, a proposal URI, a thread), else the active editor's. */
  const targetOf = (arg: unknown, kind: 'approval' | 'work'): CommentTarget | undefined => {
    if (typeof arg === 'string' && arg !== '') return arg.startsWith(`${kind}:`) ? (arg as CommentTarget) : (`${kind}:${arg}` as CommentTarget);
    const ofThread = threads.get(arg as vscode.CommentThread)?.[0]?.target;
    if (ofThread?.startsWith(`${kind}:`)) return ofThread;
    const uri = arg instanceof vscode.Uri ? arg : vscode.window.activeTextEditor?.document.uri;
    // Either side of a held patch's diff names its hold, the side of a file that has none too (an added file's
    // before, a deleted file's proposal): it takes no comment, but Request Changes from there sends the hold's.
    const holdId = uri ? fromProposalUri(uri)?.approvalId : undefined;
    if (kind === 'approval' && holdId !== undefined && pendingHold(holdId)) return `approval:${holdId}`;
    const at = uri ? locate(uri) : undefined;
    if (at?.target.startsWith(`${kind}:`)) return at.target;
    const ofKind = [...new Set(drafts.map((d) => d.target).filter((t) => t.startsWith(`${kind}:`)))];
    return ofKind.length === 1 ? ofKind[0] : undefined;
  };

  const requestChanges = async (arg?: unknown, noteArg?: unknown): Promise<CommentsSent> => {
    const target = targetOf(arg, 'approval');
    if (!target) {
      void vscode.window.showInformationMessage('CodeSpace: open the review of a held patch and comment on its lines first.');
      return { ok: false, code: 'NOT_FOUND' };
    }
    const approvalId = target.slice('approval:'.length);
    const mine = drafts.filter((d) => d.target === target);
    if (mine.length === 0) {
      void vscode.window.showInformationMessage('CodeSpace: no comments to send. Select lines of either side of the diff and add a comment (the + in the gutter, or Add Comment on Current Selection), then Request Changes.');
      return { ok: false, target, code: 'NO_COMMENTS' };
    }
    const note = typeof noteArg === 'string' && noteArg.trim() !== '' ? noteArg.trim() : undefined;
    try {
      await approvals.requestChanges(approvalId, mine.map(toComment), note !== undefined ? { note } : {});
    } catch (err) {
      void vscode.window.showErrorMessage(`CodeSpace: the changes could not be requested: ${errorMessage(err)}`);
      return { ok: false, target, code: errorCode(err) ?? 'INTERNAL', message: errorMessage(err) };
    }
    log.info(`[review] hold ${approvalId}: changes requested with ${mine.length} comment(s)`);
    clear(target);
    return { ok: true, target, comments: mine.length };
  };

  const sendToWork = async (arg?: unknown): Promise<CommentsSent> => {
    const target = targetOf(arg, 'work');
    if (!target || !deps.sendToWork) {
      void vscode.window.showInformationMessage('CodeSpace: open a work review and comment on its lines first.');
      return { ok: false, code: 'NOT_FOUND' };
    }
    const mine = drafts.filter((d) => d.target === target);
    if (mine.length === 0) {
      void vscode.window.showInformationMessage('CodeSpace: no comments to send. Select lines in the review and add a comment first.');
      return { ok: false, target, code: 'NO_COMMENTS' };
    }
    try {
      const id = await deps.sendToWork(target.slice('work:'.length), mine.map(toComment));
      log.info(`[review] ${mine.length} comment(s) queued for ${target} as ${id}`);
      clear(target);
      return { ok: true, target, comments: mine.length, instruction_id: id };
    } catch (err) {
      void vscode.window.showErrorMessage(`CodeSpace: the comments could not be sent: ${errorMessage(err)}`);
      return { ok: false, target, code: errorCode(err) ?? 'INTERNAL', message: errorMessage(err) };
    }
  };

  controller.commentingRangeProvider = {
    provideCommentingRanges(document: vscode.TextDocument): vscode.Range[] {
      if (!locate(document.uri)) return [];
      return [new vscode.Range(0, 0, Math.max(0, document.lineCount - 1), 0)];
    },
  };

  restore();
  // A hold decided in any way takes its unsent comments with it (Request Changes clears them itself).
  const holds = approvals.onDidChange((h) => {
    if (h.state !== 'pending' && h.comments === undefined && drafts.some((d) => d.target === `approval:${h.approval_id}`)) {
      log.info(`[review] hold ${h.approval_id} is ${h.state}; its unsent comments are dropped`);
      clear(`approval:${h.approval_id}`);
    }
  });

  const forTests: ReviewCommentsForTests = {
    async add(uri, start, end, body) {
      const doc = await vscode.workspace.openTextDocument(uri);
      const thread = controller.createCommentThread(uri, new vscode.Range(start - 1, 0, end - 1, doc.lineAt(Math.min(end, doc.lineCount) - 1).text.length), []);
      threads.set(thread, []);
      await addComment(thread, body);
    },
    drafts: (target) => {
      const mine = drafts.filter((d) => d.target === target).map(toComment);
      return mine.length > 0 ? checkReviewComments(mine) : [];
    },
    threads: () => [...threads].map(([t, items]) => ({ uri: t.uri.toString(), start_line: (t.range?.start.line ?? 0) + 1, end_line: (t.range?.end.line ?? 0) + 1, bodies: items.map((d) => d.body) })),
    reload: restore,
  };

  return {
    disposables: [
      controller,
      holds,
      vscode.commands.registerCommand(COMMANDS.addReviewComment, onReply),
      vscode.commands.registerCommand(COMMANDS.deleteReviewCommentThread, (thread: vscode.CommentThread) => dropThread(thread)),
      vscode.commands.registerCommand(COMMANDS.deleteReviewComment, (comment: DraftView) => deleteComment(comment)),
      vscode.commands.registerCommand(COMMANDS.requestChanges, requestChanges),
      vscode.commands.registerCommand(COMMANDS.sendReviewComments, sendToWork),
      new vscode.Disposable(() => threads.clear()),
    ],
    forTests,
  };
}
