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
} from '../../../src/features/editor/common/languageFeatures';

/** A language server double: each answer is whatever the test sets; every call is recorded. */
export class FakeLanguage implements LanguageFeatures {
  calls: string[] = [];
  diags: FileDiagnostics[] = [];
  settled = true;
  settleCalls: { paths: readonly string[]; options: SettleOptions }[] = [];
  symbolsTree: DocumentSymbolNode[] = [];
  wsSymbols: WorkspaceSymbol[] = [];
  locations: EditorLocation[] = [];
  hovers: { contents: string[]; range?: TextRange }[] = [];
  renameAnswer: (path: string, position: TextPosition, newName: string) => Promise<RenameOutcome> = () => Promise.resolve({ edits: [], fileOperations: 0 });
  state: EditorState = { active: undefined, visible: [], dirty: [] };
  actions: CodeActionInfo[] = [];
  /** The last code action request: its range and options. */
  actionRequests: { path: string; range: TextRange; kind?: string; resolve: boolean }[] = [];
  formatAnswer: (path: string, range: TextRange | undefined) => Promise<FileTextEdits | undefined> = () => Promise.resolve(undefined);
  hierarchy: { items: CallItem[]; edges: CallEdge[] } = { items: [], edges: [] };

  reportsOn(p: string): boolean {
    return p.endsWith('.ts');
  }
  diagnostics(paths?: readonly string[]): Promise<FileDiagnostics[]> {
    this.calls.push(`diagnostics ${paths ? paths.join(',') : '*'}`);
    return Promise.resolve(paths ? this.diags.filter((d) => paths.includes(d.path)) : this.diags);
  }
  async settle(paths: readonly string[], options: SettleOptions): Promise<{ settled: boolean; files: FileDiagnostics[] }> {
    this.settleCalls.push({ paths, options });
    this.calls.push(`settle ${paths.join(',')}`);
    return { settled: this.settled, files: await this.diagnostics(paths) };
  }
  documentSymbols(p: string): Promise<DocumentSymbolNode[]> {
    this.calls.push(`symbols ${p}`);
    return Promise.resolve(this.symbolsTree);
  }
  workspaceSymbols(): Promise<WorkspaceSymbol[]> {
    return Promise.resolve(this.wsSymbols);
  }
  definition(p: string, pos: TextPosition): Promise<EditorLocation[]> {
    this.calls.push(`definition ${p} ${pos.line}:${pos.character}`);
    return Promise.resolve(this.locations);
  }
  references(p: string, pos: TextPosition): Promise<EditorLocation[]> {
    this.calls.push(`references ${p} ${pos.line}:${pos.character}`);
    return Promise.resolve(this.locations);
  }
  hover(p: string): Promise<{ contents: string[]; range?: TextRange }[]> {
    this.calls.push(`hover ${p}`);
    return Promise.resolve(this.hovers);
  }
  rename(p: string, pos: TextPosition, newName: string): Promise<RenameOutcome> {
    this.calls.push(`rename ${p} ${pos.line}:${pos.character} ${newName}`);
    return this.renameAnswer(p, pos, newName);
  }
  codeActions(p: string, range: TextRange, options: { readonly kind?: string; readonly resolve: boolean }): Promise<CodeActionInfo[]> {
    this.calls.push(`codeActions ${p}`);
    this.actionRequests.push({ path: p, range, ...(options.kind !== undefined ? { kind: options.kind } : {}), resolve: options.resolve });
    return Promise.resolve(this.actions);
  }
  formatEdits(p: string, range: TextRange | undefined): Promise<FileTextEdits | undefined> {
    this.calls.push(`format ${p}`);
    return this.formatAnswer(p, range);
  }
  callHierarchy(p: string, pos: TextPosition, direction: 'incoming' | 'outgoing'): Promise<{ items: CallItem[]; edges: CallEdge[] }> {
    this.calls.push(`callHierarchy ${p} ${pos.line}:${pos.character} ${direction}`);
    return Promise.resolve(this.hierarchy);
  }
  editorState(): EditorState {
    return this.state;
  }
}
