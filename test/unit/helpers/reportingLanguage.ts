import type { CallEdge, CallItem, CodeActionInfo, DocumentSymbolNode, EditorDiagnostic, EditorLocation, EditorState, FileDiagnostics, FileTextEdits, LanguageFeatures, RenameOutcome, SettleOptions, WorkspaceSymbol } from '../../../src/features/editor/common/languageFeatures';

/** The one problem ReportingLanguage finds in every file: a warning on the first line. */
export const REPORTED: EditorDiagnostic = { range: { start: { line: 1, character: 1 }, end: { line: 1, character: 2 } }, severity: 'warning', message: 'reported by the test language server', source: 'test' };

/** The editor features a diagnostics test does not use: every question answers with nothing. */
export abstract class InertLanguage implements LanguageFeatures {
  abstract reportsOn(path: string): boolean;
  abstract diagnostics(paths?: readonly string[]): Promise<FileDiagnostics[]>;
  abstract settle(paths: readonly string[], options: SettleOptions): Promise<{ settled: boolean; files: FileDiagnostics[] }>;
  documentSymbols(): Promise<DocumentSymbolNode[]> {
    return Promise.resolve([]);
  }
  workspaceSymbols(): Promise<WorkspaceSymbol[]> {
    return Promise.resolve([]);
  }
  definition(): Promise<EditorLocation[]> {
    return Promise.resolve([]);
  }
  references(): Promise<EditorLocation[]> {
    return Promise.resolve([]);
  }
  hover(): Promise<{ contents: string[] }[]> {
    return Promise.resolve([]);
  }
  rename(): Promise<RenameOutcome> {
    return Promise.resolve({ refused: 'not in this test' });
  }
  codeActions(): Promise<CodeActionInfo[]> {
    return Promise.resolve([]);
  }
  formatEdits(): Promise<FileTextEdits | undefined> {
    return Promise.resolve(undefined);
  }
  callHierarchy(): Promise<{ items: CallItem[]; edges: CallEdge[] }> {
    return Promise.resolve({ items: [], edges: [] });
  }
  editorState(): EditorState {
    return { active: undefined, visible: [], dirty: [] };
  }
}

/** A language port that reports on every file at once: each settle answers with REPORTED for each path. */
export class ReportingLanguage extends InertLanguage {
  reportsOn(): boolean {
    return true;
  }
  diagnostics(paths?: readonly string[]): Promise<FileDiagnostics[]> {
    return Promise.resolve((paths ?? []).map((p) => ({ path: p, diagnostics: [REPORTED] })));
  }
  settle(paths: readonly string[]): Promise<{ settled: boolean; files: FileDiagnostics[] }> {
    return Promise.resolve({ settled: true, files: paths.map((p) => ({ path: p, diagnostics: [REPORTED] })) });
  }
}
