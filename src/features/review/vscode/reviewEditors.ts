import * as vscode from 'vscode';
import type { HoldFileKind } from '../../../kernel/approvals/hold';
import type { ProposalRef, ProposalSide } from './proposalUri';
import { toProposalUri } from './proposalUri';
import type { ReviewTabs, ReviewUnit } from './reviewTabs';
import { isMultiDiffTab, tabRefs } from './reviewTabs';

/** What the editors need of a file of a hold or a preview (HoldFile and ProposalFile both fit). */
export interface ReviewFile {
  readonly path: string;
  readonly kind: HoldFileKind;
  readonly move_to?: string;
}

export const STALE_MARK = '(stale — cannot be approved)';

const KIND_TAG: Record<HoldFileKind, string> = { update: 'proposal', add: 'added', delete: 'deleted', move: 'moved' };

function refOf(unit: ReviewUnit, side: ProposalSide, path: string): ProposalRef {
  return unit.approvalId !== undefined ? { approvalId: unit.approvalId, side, path } : { previewId: unit.previewId as string, side, path };
}

export function sideUris(unit: ReviewUnit, file: ReviewFile): { before: vscode.Uri; proposed: vscode.Uri } {
  return {
    before: toProposalUri(refOf(unit, 'before', file.path)),
    proposed: toProposalUri(refOf(unit, 'proposed', file.move_to ?? file.path)),
  };
}

/** `src/a.ts (proposal)`, `src/new.ts (added)`, `a.ts → b.ts (moved)`; previews and stale holds say so. */
export function fileTitle(unit: ReviewUnit, file: ReviewFile, stale = false): string {
  const name = file.kind === 'move' && file.move_to ? `${file.path} → ${file.move_to}` : file.path;
  if (stale) return `${name} ${STALE_MARK}`;
  return unit.previewId !== undefined ? `${name} (preview, ${KIND_TAG[file.kind]})` : `${name} (${KIND_TAG[file.kind]})`;
}

function shortId(id: string): string {
  return id.length > 12 ? id.slice(0, 12) : id;
}

/** Label of a multi-file review; the editor appends " (N files)". */
export function unitTitle(unit: ReviewUnit, stale = false): string {
  if (unit.previewId !== undefined) return `CodeSpace preview ${shortId(unit.previewId)}`;
  return stale ? `CodeSpace review ${shortId(unit.approvalId)} ${STALE_MARK}` : `CodeSpace review ${shortId(unit.approvalId)}`;
}

/** How many files of a hold open by themselves when it appears (the rest: Review, or Next File). */
export const AUTO_OPEN_MAX = 5;

/** Opens review units in VS Code's own diff editors. */
export class ReviewEditors {
  constructor(private readonly tabs: ReviewTabs) {}

  /** One file, in the side-by-side diff editor: the left read-only, the right editable while the hold is pending. */
  async openFile(unit: ReviewUnit, file: ReviewFile, options: { preserveFocus: boolean; stale?: boolean; viewColumn?: vscode.ViewColumn }): Promise<void> {
    const { before, proposed } = sideUris(unit, file);
    const show: vscode.TextDocumentShowOptions = { preserveFocus: options.preserveFocus, preview: false };
    if (options.viewColumn !== undefined) show.viewColumn = options.viewColumn;
    await vscode.commands.executeCommand('vscode.diff', before, proposed, fileTitle(unit, file, options.stale), show);
  }

  /**
   * The whole unit: a single file in the diff editor, several as one review in the multi-file diff editor
   * (`vscode.changes`, whose right sides are editable like the diff editor's: it asks each document whether it
   * is read-only). `vscode.changes` takes no options and returns before the editor exists, so this waits for the
   * tab and pins it. It takes focus: use it when the reviewer asked for the review.
   */
  async openUnit(unit: ReviewUnit, files: readonly ReviewFile[], options: { stale?: boolean } = {}): Promise<vscode.Tab | undefined> {
    const first = files[0];
    if (!first) return undefined;
    if (files.length === 1) {
      await this.openFile(unit, first, { preserveFocus: false, stale: options.stale === true });
      return this.tabs.waitForTab(unit, (t) => !isMultiDiffTab(t), 5_000);
    }
    const label = unitTitle(unit, options.stale === true);
    this.tabs.rememberMultiLabel(label, unit);
    // One review is one tab: an earlier multi-file tab of it is replaced unless it holds an unsaved edit.
    const existing = this.tabs.tabsOf(unit).filter(isMultiDiffTab);
    const dirty = existing.find((t) => t.isDirty);
    if (dirty) return dirty;
    if (existing.length > 0) await vscode.window.tabGroups.close(existing, true);
    const resources = files.map((f) => {
      const { before, proposed } = sideUris(unit, f);
      return [proposed, before, proposed];
    });
    await vscode.commands.executeCommand('vscode.changes', label, resources);
    const tab = await this.tabs.waitForTab(unit, (t) => isMultiDiffTab(t) && (t.label === label || t.label.startsWith(`${label} (`)));
    if (tab?.isPreview && vscode.window.tabGroups.activeTabGroup.activeTab === tab) await vscode.commands.executeCommand('workbench.action.keepEditor');
    return tab;
  }

  /**
   * A hold appeared: its files open in diff editors without taking focus (preserveFocus, not in preview mode), up
   * to AUTO_OPEN_MAX of them, and the first is shown.
   */
  async openInBackground(unit: ReviewUnit, files: readonly ReviewFile[]): Promise<void> {
    const [first, ...rest] = files.slice(0, AUTO_OPEN_MAX);
    if (!first) return;
    await this.openFile(unit, first, { preserveFocus: true });
    // The rest go where the first went, even if the developer moves to another group meanwhile.
    const { proposed } = sideUris(unit, first);
    const viewColumn = this.tabs.tabsOf(unit).find((t) => tabRefs(t).some((r) => r.side === 'proposed' && toProposalUri(r).toString() === proposed.toString()))?.group.viewColumn;
    for (const f of rest) await this.openFile(unit, f, { preserveFocus: true, viewColumn });
    if (rest.length > 0) await this.openFile(unit, first, { preserveFocus: true, viewColumn });
  }

  /**
   * A hold went stale: its tabs are reopened under a title that says it cannot be approved. Per-file diffs are
   * reopened where they were, without taking focus; a multi-file review only when it is the tab being looked at
   * (reopening it takes focus). Tabs with unsaved edits stay as they are.
   */
  async markStale(unit: ReviewUnit, files: readonly ReviewFile[]): Promise<void> {
    const active = vscode.window.tabGroups.activeTabGroup.activeTab;
    for (const tab of this.tabs.tabsOf(unit)) {
      if (tab.isDirty || tab.label.includes(STALE_MARK)) continue;
      if (isMultiDiffTab(tab)) {
        if (tab === active) await this.openUnit(unit, files, { stale: true });
        continue;
      }
      const ref = tabRefs(tab).find((r) => r.side === 'proposed') ?? tabRefs(tab)[0];
      const file = ref && files.find((f) => (ref.side === 'before' ? f.path : (f.move_to ?? f.path)) === ref.path);
      if (!file) continue;
      const viewColumn = tab.group.viewColumn;
      await vscode.window.tabGroups.close(tab, true);
      await this.openFile(unit, file, { preserveFocus: true, stale: true, viewColumn });
    }
  }

  /** Index of the file the active per-file tab shows, or undefined (a multi-file review, or another tab). */
  activeIndex(files: readonly ReviewFile[]): number | undefined {
    const ref = this.tabs.activeRef();
    if (!ref) return undefined;
    const i = files.findIndex((f) => (ref.side === 'before' ? f.path : (f.move_to ?? f.path)) === ref.path);
    return i < 0 ? undefined : i;
  }
}
