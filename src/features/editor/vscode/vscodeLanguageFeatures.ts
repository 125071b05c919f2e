import { promises as fsp } from 'node:fs';
import * as vscode from 'vscode';
import type {
  CallEdge,
  CallItem,
  CodeActionInfo,
  DocumentSymbolNode,
  EditorLocation,
  EditorState,
  FileDiagnostics,
  FileTextEdits,
  LanguageFeatures,
  RenameOutcome,
  SettleOptions,
  TextPosition,
  TextRange,
  WorkspaceSymbol,
} from '../common/languageFeatures';
import { describeError } from '../../../base/describeError';
import { editorEditOf, fromPosition, hoverText, openDocument, pathOf, symbolKind, toDiagnostic, toLocation, toRange, toSymbolNode } from './convert';
import { callsAt, codeActionsAt, formattingEdits } from './vscodeCodeEdits';

/**
 * LanguageFeatures on VS Code's own commands (`vscode.execute*Provider`) and diagnostics, so agents get what every
 * installed language server knows. Converts VS Code's 0-based positions to the port's 1-based ones and back.
 */

/** After the last diagnostics report for the files, this long without another counts as settled. */
export const QUIET_MS = 800;
/** The quiet period when a file was just opened for checking: its first check takes longer to arrive. */
export const FIRST_CHECK_QUIET_MS = 1600;
/** Most background tabs one wait opens (the core asks for at most 20 files of a patch). */
const MAX_BACKGROUND_TABS = 20;
/** A file opened for checking and still unreported after this long has its tab reopened once. */
const NUDGE_MS = 3000;
/**
 * How long a background tab stays after its check, for the next check of the same file: an agent edits a file several
 * times in a row, and closing the tab only to open it again made the editor and the TypeScript server drop and load
 * the file each time, work that competed with the agent's next calls.
 */
export const LINGER_MS = 3000;

/** The file's text on disk (BOM removed, as the editor shows it), or undefined when it cannot be read. */
async function diskText(path: string): Promise<string | undefined> {
  try {
    const text = await fsp.readFile(path, 'utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  } catch {
    return undefined;
  }
}

/** The files shown in any editor tab. */
function tabUris(): Set<string> {
  const out = new Set<string>();
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) if (tab.input instanceof vscode.TabInputText) out.add(tab.input.uri.toString());
  }
  return out;
}

/** Closes the tabs of these files that are still clean (a tab the developer has typed into stays). */
async function closeTabs(uris: readonly vscode.Uri[]): Promise<void> {
  if (uris.length === 0) return;
  const keys = new Set(uris.map((u) => u.toString()));
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && keys.has(t.input.uri.toString()) && !t.isDirty);
  if (tabs.length > 0) await vscode.window.tabGroups.close(tabs, true).then(undefined, () => undefined);
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(done, Math.max(0, ms));
    function done(): void {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The name part a language is known by: the extension (`.ts`), or the whole name for files like `Dockerfile`. */
function fileKind(p: string): string {
  const base = p.slice(Math.max(p.lastIndexOf('/'), p.lastIndexOf('\\')) + 1).toLowerCase();
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(dot) : base;
}

interface Manifest {
  readonly main?: unknown;
  readonly browser?: unknown;
  readonly activationEvents?: unknown;
  readonly contributes?: { readonly languages?: unknown };
}

/**
 * The kinds of file (see fileKind) whose language some installed extension with code starts for
 * (`onLanguage:<id>`): those may have a language server behind them. Grammar-only languages (plain text, and
 * Python without its extension) do not.
 */
function kindsWithCode(): Set<string> {
  const kindsOf = new Map<string, string[]>();
  const started = new Set<string>();
  for (const ext of vscode.extensions.all) {
    const m = ext.packageJSON as Manifest;
    const languages = Array.isArray(m.contributes?.languages) ? (m.contributes.languages as { id?: unknown; extensions?: unknown; filenames?: unknown }[]) : [];
    for (const l of languages) {
      if (typeof l.id !== 'string') continue;
      const kinds = kindsOf.get(l.id) ?? [];
      for (const e of Array.isArray(l.extensions) ? l.extensions : []) if (typeof e === 'string') kinds.push(e.toLowerCase());
      for (const f of Array.isArray(l.filenames) ? l.filenames : []) if (typeof f === 'string') kinds.push(fileKind(f));
      kindsOf.set(l.id, kinds);
    }
    if (m.main === undefined && m.browser === undefined) continue;
    for (const e of Array.isArray(m.activationEvents) ? m.activationEvents : []) {
      if (typeof e === 'string' && e.startsWith('onLanguage:')) started.add(e.slice('onLanguage:'.length));
    }
  }
  const out = new Set<string>();
  for (const id of started) for (const k of kindsOf.get(id) ?? []) out.add(k);
  return out;
}

export class VsCodeLanguageFeatures implements LanguageFeatures, vscode.Disposable {
  /**
   * Kinds of file some language server has reported a problem on in this window. An empty report alone does not
   * count: the editor also sends one when it drops a document's (empty) diagnostics, whatever its kind.
   */
  private readonly reported = new Set<string>();
  private withCode: Set<string> | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];
  /** Background tabs of finished checks, by URI, each with the timer that closes it (see LINGER_MS). */
  private readonly lingering = new Map<string, { uri: vscode.Uri; timer: NodeJS.Timeout }>();

  constructor() {
    for (const [uri, list] of vscode.languages.getDiagnostics()) if (list.length > 0) this.reported.add(fileKind(uri.path));
    this.subscriptions.push(
      vscode.languages.onDidChangeDiagnostics((e) => {
        for (const uri of e.uris) if (vscode.languages.getDiagnostics(uri).length > 0) this.reported.add(fileKind(uri.path));
      }),
      vscode.extensions.onDidChange(() => (this.withCode = undefined)),
    );
  }

  dispose(): void {
    for (const s of this.subscriptions.splice(0)) s.dispose();
    const left = [...this.lingering.values()];
    this.lingering.clear();
    for (const l of left) clearTimeout(l.timer);
    void closeTabs(left.map((l) => l.uri));
  }

  /** Takes a lingering background tab of this file back for a check: true when there was one. */
  private reclaim(key: string): boolean {
    const l = this.lingering.get(key);
    if (!l) return false;
    clearTimeout(l.timer);
    this.lingering.delete(key);
    return true;
  }

  /** Closes these background tabs after LINGER_MS, unless a check takes one back first. */
  private linger(uris: readonly vscode.Uri[]): void {
    for (const uri of uris) {
      const key = uri.toString();
      this.reclaim(key);
      const timer = setTimeout(() => {
        if (this.lingering.get(key)?.timer !== timer) return;
        this.lingering.delete(key);
        void closeTabs([uri]);
      }, LINGER_MS);
      this.lingering.set(key, { uri, timer });
    }
  }

  reportsOn(path: string): boolean {
    const kind = fileKind(path);
    if (this.reported.has(kind)) return true;
    this.withCode ??= kindsWithCode();
    return this.withCode.has(kind);
  }

  async diagnostics(paths?: readonly string[]): Promise<FileDiagnostics[]> {
    if (paths === undefined) {
      return vscode.languages
        .getDiagnostics()
        .filter(([uri]) => uri.scheme === 'file')
        .map(([uri, list]) => ({ path: uri.fsPath, diagnostics: list.map(toDiagnostic) }));
    }
    return paths.map((p) => ({ path: p, diagnostics: vscode.languages.getDiagnostics(vscode.Uri.file(p)).map(toDiagnostic) }));
  }

  /**
   * The TypeScript server checks only files open in an editor tab (typescript-language-features'
   * `BufferSyncSupport.shouldValidate`: a document opened with `openTextDocument` alone, or a file never opened, gets
   * no diagnostics unless `typescript.tsserver.experimental.enableProjectDiagnostics` is on), and other language
   * servers behave alike. So a file that is in no tab is opened in a background tab (`vscode.open` with `background`:
   * the active editor and focus stay as they are) for the wait, and that tab is closed again afterwards.
   *
   * Then: wait until an open document shows what is on disk (the editor reloads it after a write), until every file
   * that had problems has been reported again, and then QUIET_MS (FIRST_CHECK_QUIET_MS after opening a tab) without
   * another report. A file that had no problems and
   * still has none is never re-reported (the TypeScript extension skips an empty report over an empty one), which is
   * why a quiet period, not only the reports, decides.
   */
  async settle(paths: readonly string[], options: SettleOptions): Promise<{ settled: boolean; files: FileDiagnostics[] }> {
    const deadline = Date.now() + options.timeoutMs;
    const uris = paths.map((p) => vscode.Uri.file(p));
    const keys = new Set(uris.map((u) => u.toString()));
    const pathByKey = new Map(uris.map((u, i) => [u.toString(), paths[i] as string]));
    const seen = new Set<string>();
    const opened: vscode.Uri[] = [];
    let lastReport = Date.now();
    let wake: (() => void) | undefined;
    // With requireChange: the content on disk each file must show before a report about it counts.
    const expected = new Map<string, string>();
    const listening = vscode.languages.onDidChangeDiagnostics((e) => {
      let ours = false;
      for (const u of e.uris) {
        const k = u.toString();
        if (!keys.has(k)) continue;
        // A report made while the editor still shows the old content is about the old content (a late report of a
        // check that began before the write): it does not count as the re-report, nor restart the quiet period.
        const want = expected.get(k);
        const doc = want === undefined ? undefined : openDocument(u);
        if (doc && !doc.isDirty && doc.getText() !== want) continue;
        seen.add(k);
        ours = true;
        // What is known now, handed on at once when it is provably about the new content (the document shows it).
        const at = pathByKey.get(k);
        if (options.onReport && doc && !doc.isDirty && at !== undefined) options.onReport(at, vscode.languages.getDiagnostics(u).map(toDiagnostic));
      }
      if (ours) {
        lastReport = Date.now();
        wake?.();
      }
    });
    const changed = vscode.workspace.onDidChangeTextDocument((e) => {
      if (keys.has(e.document.uri.toString())) wake?.();
    });
    const onAbort = (): void => wake?.();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const wait = (ms: number): Promise<void> =>
      new Promise<void>((resolve) => {
        const ac = new AbortController();
        wake = () => ac.abort();
        void sleep(ms, ac.signal).then(resolve);
      });
    const run = async (): Promise<boolean> => {
      const mustSee = new Set<string>();
      const syncing: vscode.Uri[] = [];
      const tabbed = tabUris();
      /** Files opened for a first check that had no problems before: a clean file may never be reported. */
      const firstCheck = new Set<string>();
      if (options.requireChange) {
        for (const [i, uri] of uris.entries()) {
          const text = await diskText(paths[i] as string);
          if (text !== undefined) expected.set(uri.toString(), text);
        }
      }
      for (const uri of uris) {
        const key = uri.toString();
        const open = openDocument(uri);
        // Our own tab of an earlier check, still there: this check's now (closed, after lingering, at its end).
        if (tabbed.has(key) && this.reclaim(key)) opened.push(uri);
        if (!tabbed.has(key) && opened.length < MAX_BACKGROUND_TABS) {
          try {
            // The document first, then its tab: the TypeScript extension asks for diagnostics when a tab opens for a
            // document it already syncs; the other order can leave the file unchecked.
            await vscode.workspace.openTextDocument(uri);
            await vscode.commands.executeCommand('vscode.open', uri, { background: true, preview: false, preserveFocus: true });
            opened.push(uri);
            // A file with problems is reported again. A clean one is not reported at all when it stays clean (also
            // on its first check, as measured with the TypeScript server): a longer quiet period covers its first
            // check instead.
            if (vscode.languages.getDiagnostics(uri).length > 0) mustSee.add(key);
            else firstCheck.add(key);
          } catch {
            // Not a text document the editor can open (binary, too large): no language server will report it.
          }
          if (!open) continue;
        }
        if (!open || !options.requireChange) continue;
        if (vscode.languages.getDiagnostics(uri).length > 0) mustSee.add(key);
        syncing.push(uri);
      }
      // An open document shows the new content only once the editor has reloaded it from disk.
      for (const uri of syncing) {
        const want = expected.get(uri.toString());
        // Looked up each time: a document closed meanwhile (its last tab closed) no longer follows the disk.
        for (let doc = openDocument(uri); want !== undefined && doc && !doc.isClosed && !doc.isDirty && doc.getText() !== want; doc = openDocument(uri)) {
          if (Date.now() >= deadline || options.signal?.aborted) return false;
          await wait(Math.min(100, deadline - Date.now()));
        }
      }
      if (mustSee.size === 0 && !options.requireChange && opened.length === 0) return true;
      // The quiet period counts from when the documents show the new content.
      lastReport = Math.max(lastReport, Date.now());
      let nudgeAt = Date.now() + NUDGE_MS;
      for (;;) {
        if (options.signal?.aborted) return false;
        const now = Date.now();
        // The longer quiet period covers a first check that has not arrived yet; once every such file has been
        // reported, the ordinary one decides.
        const quietMs = [...firstCheck].every((k) => seen.has(k)) ? QUIET_MS : FIRST_CHECK_QUIET_MS;
        const allSeen = [...mustSee].every((k) => seen.has(k));
        if (!allSeen && now >= nudgeAt) {
          // Still unreported: reopen our tabs of those files once, which makes the server check them again.
          nudgeAt = Number.POSITIVE_INFINITY;
          const late = opened.filter((u) => !seen.has(u.toString()));
          await closeTabs(late);
          for (const u of late) await vscode.commands.executeCommand('vscode.open', u, { background: true, preview: false, preserveFocus: true }).then(undefined, () => undefined);
          continue;
        }
        if (allSeen && now - lastReport >= quietMs) return true;
        if (now >= deadline) return false;
        await wait(Math.max(1, Math.min(deadline - now, allSeen ? quietMs - (now - lastReport) : 100)));
      }
    };
    try {
      const settled = await run();
      // Read before the background tabs close: closing one makes the server drop that file's diagnostics.
      const files = await this.diagnostics(paths);
      return { settled, files };
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      listening.dispose();
      changed.dispose();
      this.linger(opened);
    }
  }

  async documentSymbols(path: string): Promise<DocumentSymbolNode[]> {
    const found = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[] | undefined>('vscode.executeDocumentSymbolProvider', vscode.Uri.file(path));
    return (found ?? []).map(toSymbolNode);
  }

  async workspaceSymbols(query: string): Promise<WorkspaceSymbol[]> {
    const found = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>('vscode.executeWorkspaceSymbolProvider', query);
    return (found ?? []).map((s) => ({
      name: s.name,
      kind: symbolKind(s.kind),
      ...(s.containerName ? { containerName: s.containerName } : {}),
      location: { path: pathOf(s.location.uri), range: toRange(s.location.range) },
    }));
  }

  async definition(path: string, position: TextPosition): Promise<EditorLocation[]> {
    const found = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>('vscode.executeDefinitionProvider', vscode.Uri.file(path), fromPosition(position));
    return (found ?? []).map(toLocation);
  }

  async references(path: string, position: TextPosition): Promise<EditorLocation[]> {
    const found = await vscode.commands.executeCommand<vscode.Location[] | undefined>('vscode.executeReferenceProvider', vscode.Uri.file(path), fromPosition(position));
    return (found ?? []).map(toLocation);
  }

  async hover(path: string, position: TextPosition): Promise<{ contents: string[]; range?: TextRange }[]> {
    const found = await vscode.commands.executeCommand<vscode.Hover[] | undefined>('vscode.executeHoverProvider', vscode.Uri.file(path), fromPosition(position));
    return (found ?? []).map((h) => ({ contents: h.contents.map(hoverText), ...(h.range ? { range: toRange(h.range) } : {}) }));
  }

  async rename(path: string, position: TextPosition, newName: string): Promise<RenameOutcome> {
    let edit: vscode.WorkspaceEdit | undefined;
    try {
      // Workaround: VS Code's registerModelAndPositionCommand (src/vs/editor/browser/editorExtensions.ts, 1.100)
      // passes the extra arguments unspread (`args.slice(2)`) when the file's model is not loaded yet, so the rename
      // command receives an array for newName and fails with "Unexpected type". A document opened first has its model
      // loaded and takes the correct branch. (No upstream issue found; proven by test/integration/language.test.ts,
      // which renames in a file no editor has open.)
      await vscode.workspace.openTextDocument(vscode.Uri.file(path));
      edit = await vscode.commands.executeCommand<vscode.WorkspaceEdit | undefined>('vscode.executeDocumentRenameProvider', vscode.Uri.file(path), fromPosition(position), newName);
    } catch (err) {
      // The provider refuses with a message ("You cannot rename this element.").
      return { refused: describeError(err) };
    }
    if (!edit) return { refused: 'no rename provider answered for this position' };
    const outcome = await editorEditOf(edit);
    return 'refused' in outcome ? { refused: `the rename ${outcome.refused}` } : outcome;
  }

  codeActions(path: string, range: TextRange, options: { readonly kind?: string; readonly resolve: boolean }): Promise<CodeActionInfo[]> {
    return codeActionsAt(path, range, options);
  }

  formatEdits(path: string, range: TextRange | undefined): Promise<FileTextEdits | undefined> {
    return formattingEdits(path, range);
  }

  callHierarchy(path: string, position: TextPosition, direction: 'incoming' | 'outgoing'): Promise<{ items: CallItem[]; edges: CallEdge[] }> {
    return callsAt(path, position, direction);
  }

  editorState(): EditorState {
    const view = (e: vscode.TextEditor) => ({ path: pathOf(e.document.uri), selections: e.selections.map(toRange) });
    const active = vscode.window.activeTextEditor;
    return {
      active: active ? { ...view(active), selectedText: active.document.getText(active.selection) } : undefined,
      visible: vscode.window.visibleTextEditors.map(view),
      dirty: vscode.workspace.textDocuments.filter((d) => d.isDirty).map((d) => pathOf(d.uri)),
    };
  }
}
