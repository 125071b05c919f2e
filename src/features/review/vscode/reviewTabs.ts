import * as vscode from 'vscode';
import type { ProposalRef } from './proposalUri';
import { fromProposalUri, unitKey } from './proposalUri';

/** A review unit: the files of one patch hold, or of one check_only preview. */
export type ReviewUnit = { readonly approvalId: string; readonly previewId?: undefined } | { readonly previewId: string; readonly approvalId?: undefined };

/**
 * The multi-file diff editor's tab input. `vscode.TabInputTextMultiDiff` is still a proposed API in 1.100, but the
 * extension host hands the instance (with `textDiffs`: one TabInputTextDiff per file that has both sides) to every
 * extension, so it is recognised by shape.
 */
function multiDiffParts(input: unknown): vscode.TabInputTextDiff[] | undefined {
  if (typeof input !== 'object' || input === null || input instanceof vscode.TabInputTextDiff) return undefined;
  const parts = (input as { textDiffs?: unknown }).textDiffs;
  return Array.isArray(parts) ? parts.filter((p): p is vscode.TabInputTextDiff => p instanceof vscode.TabInputTextDiff) : undefined;
}

export function isMultiDiffTab(tab: vscode.Tab): boolean {
  return multiDiffParts(tab.input) !== undefined;
}

/** The proposal references a tab shows: its one document, both sides of a diff, or every file of a multi-file diff. */
export function tabRefs(tab: vscode.Tab): ProposalRef[] {
  const uris: vscode.Uri[] = [];
  const input = tab.input;
  if (input instanceof vscode.TabInputText) uris.push(input.uri);
  else if (input instanceof vscode.TabInputTextDiff) uris.push(input.original, input.modified);
  else for (const d of multiDiffParts(input) ?? []) uris.push(d.original, d.modified);
  const refs: ProposalRef[] = [];
  for (const uri of uris) {
    const ref = fromProposalUri(uri);
    if (ref) refs.push(ref);
  }
  return refs;
}

/**
 * Finds the tabs of review units. The multi-file diff editor reports its files only once it has resolved them, so
 * its tabs are also recognised by the label they were opened with (the editor appends " (N files)").
 */
export class ReviewTabs {
  /** Label of each multi-file review opened → the unit it shows. */
  private readonly multiLabels = new Map<string, string>();

  rememberMultiLabel(label: string, unit: ReviewUnit): void {
    this.multiLabels.set(label, unitKey(unit));
  }

  /** The unit a tab belongs to (the first proposal reference it shows decides). */
  unitOf(tab: vscode.Tab): ReviewUnit | undefined {
    const ref = tabRefs(tab)[0];
    if (ref) return ref.approvalId !== undefined ? { approvalId: ref.approvalId } : { previewId: ref.previewId };
    if (isMultiDiffTab(tab)) {
      for (const [label, key] of this.multiLabels) {
        if (tab.label === label || tab.label.startsWith(`${label} (`)) {
          const [kind, ...rest] = key.split(':');
          const id = rest.join(':');
          return kind === 'approval' ? { approvalId: id } : { previewId: id };
        }
      }
    }
    return undefined;
  }

  /** Every tab of a unit, in every group. */
  tabsOf(unit: ReviewUnit): vscode.Tab[] {
    const key = unitKey(unit);
    return vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => {
      const u = this.unitOf(t);
      return u !== undefined && unitKey(u) === key;
    });
  }

  /** The unit of the active tab of the active group, if it is one. */
  activeUnit(): ReviewUnit | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    return tab ? this.unitOf(tab) : undefined;
  }

  /** The proposal file the active tab shows (a per-file diff or document), if any. */
  activeRef(): ProposalRef | undefined {
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    if (!tab || isMultiDiffTab(tab)) return undefined;
    const refs = tabRefs(tab);
    return refs.find((r) => r.side === 'proposed') ?? refs[0];
  }

  /** Waits until a tab of the unit satisfying `predicate` exists (the multi-file diff opens asynchronously). */
  async waitForTab(unit: ReviewUnit, predicate: (tab: vscode.Tab) => boolean, timeoutMs = 10_000): Promise<vscode.Tab | undefined> {
    const find = (): vscode.Tab | undefined => this.tabsOf(unit).find(predicate);
    const found = find();
    if (found) return found;
    return new Promise((resolve) => {
      const done = (tab: vscode.Tab | undefined): void => {
        clearTimeout(timer);
        sub.dispose();
        resolve(tab);
      };
      const sub = vscode.window.tabGroups.onDidChangeTabs(() => {
        const t = find();
        if (t) done(t);
      });
      const timer = setTimeout(() => done(find()), timeoutMs);
    });
  }

  /** Closes the unit's tabs that hold no unsaved edit; returns how many stayed open because they are dirty. */
  async close(unit: ReviewUnit, filter: (tab: vscode.Tab) => boolean = () => true): Promise<number> {
    const tabs = this.tabsOf(unit).filter(filter);
    const clean = tabs.filter((t) => !t.isDirty);
    if (clean.length > 0) await vscode.window.tabGroups.close(clean, true);
    return tabs.length - clean.length;
  }
}
