/**
 * What the editor's language servers know about the code, in plain types. The VS Code adapter
 * (src/features/editor/vscode/) answers with VS Code's own commands (`vscode.executeDefinitionProvider`, ...); plain-Node
 * hosts have none, and the tools that need it answer UNAVAILABLE.
 *
 * Paths are absolute, in the host OS's form. A location the editor reports may lie anywhere (a library's
 * declaration file, another folder, a virtual document): `path` is undefined when it is not a file on disk. The
 * core decides what an agent may see (src/features/editor/common/language.ts): nothing outside the workspace folders.
 *
 * Positions: `line` and `character` are both 1-based; `character` counts UTF-16 code units, as editors count
 * characters (the same unit as `read`'s `start_column`). Ranges are half-open: `end` is the position after the last
 * character.
 */
export interface TextPosition {
  readonly line: number;
  readonly character: number;
}

export interface TextRange {
  readonly start: TextPosition;
  readonly end: TextPosition;
}

export interface EditorLocation {
  /** Absolute file path; undefined for a location that is not a file (an untitled or virtual document). */
  readonly path: string | undefined;
  readonly range: TextRange;
}

export type DiagnosticSeverity = 'error' | 'warning' | 'information' | 'hint';

export interface EditorDiagnostic {
  readonly range: TextRange;
  readonly severity: DiagnosticSeverity;
  readonly message: string;
  readonly source?: string;
  readonly code?: string;
}

export interface FileDiagnostics {
  readonly path: string;
  readonly diagnostics: readonly EditorDiagnostic[];
}

export interface DocumentSymbolNode {
  readonly name: string;
  /** The symbol kind's name as VS Code spells it: `Function`, `Class`, `Method`, `Variable`, ... */
  readonly kind: string;
  readonly detail?: string;
  /** The whole symbol, body included. */
  readonly range: TextRange;
  /** The name itself. */
  readonly selectionRange: TextRange;
  readonly children: readonly DocumentSymbolNode[];
}

export interface WorkspaceSymbol {
  readonly name: string;
  readonly kind: string;
  readonly containerName?: string;
  readonly location: EditorLocation;
}

/** One file's text edits of a rename, against the text the language server saw. */
export interface FileTextEdits {
  readonly path: string;
  readonly edits: readonly { readonly range: TextRange; readonly newText: string }[];
  /**
   * The document's text as the editor holds it when the edits were computed, and whether it has unsaved changes:
   * the core checks that the edits were computed on the bytes on disk.
   */
  readonly documentText: string | undefined;
  readonly dirty: boolean;
}

/** A WorkspaceEdit's text edits per file, and how many file operations (create, rename, delete) it also makes. */
export interface EditorEdit {
  readonly edits: readonly FileTextEdits[];
  readonly fileOperations: number;
}

export type RenameOutcome = EditorEdit | { readonly refused: string };

/** A quick fix, refactoring or source action a language server offers for a range. */
export interface CodeActionInfo {
  readonly title: string;
  /** Its kind as VS Code spells it (`quickfix`, `refactor.extract.function`, `source.organizeImports`, ...). */
  readonly kind?: string;
  readonly preferred: boolean;
  /** Why it cannot be applied now, when the server says so. */
  readonly disabled?: string;
  /** The diagnostics it fixes. */
  readonly diagnostics: readonly EditorDiagnostic[];
  /**
   * Its edit, when it has one (resolved when asked for): or why it cannot be read (an edit of a document that is not
   * a file).
   */
  readonly edit?: EditorEdit | { readonly refused: string };
  /** The command it runs (after its edit, when it has both). */
  readonly command?: { readonly id: string; readonly title: string };
}

/** A function or method of a call hierarchy, and where it is. */
export interface CallItem {
  readonly name: string;
  readonly kind: string;
  readonly detail?: string;
  readonly location: EditorLocation;
}

/** One edge of a call hierarchy: the caller (incoming) or the callee (outgoing), and the call sites. */
export interface CallEdge {
  readonly item: CallItem;
  /** Where the calls are: in the caller's file (incoming), in the asked item's file (outgoing). */
  readonly sites: readonly EditorLocation[];
}

export interface EditorView {
  readonly path: string | undefined;
  /** The selections of the editor; the first is the primary one. */
  readonly selections: readonly TextRange[];
}

export interface EditorState {
  /** The editor with focus, if any. */
  readonly active: (EditorView & { readonly selectedText: string }) | undefined;
  readonly visible: readonly EditorView[];
  /** Files with unsaved changes (absolute paths; non-file documents as undefined). */
  readonly dirty: readonly (string | undefined)[];
}

export interface SettleOptions {
  /** Longest wait in milliseconds. */
  readonly timeoutMs: number;
  /**
   * Wait until the diagnostics of each path have been reported again after this call (a file just changed on
   * disk): true for apply_patch; false to wait only for documents that had to be opened first.
   */
  readonly requireChange: boolean;
  readonly signal?: AbortSignal;
  /**
   * With requireChange: called each time a server reports on a path's new content (the editor shows what is on disk),
   * before the wait ends, with what the servers hold for it then. A later report may still change it.
   */
  readonly onReport?: (path: string, diagnostics: readonly EditorDiagnostic[]) => void;
}

export interface LanguageFeatures {
  /** The diagnostics of these files, or of every file the editor has diagnostics for. */
  diagnostics(paths?: readonly string[]): Promise<FileDiagnostics[]>;
  /**
   * Whether any language server of this editor is known to report diagnostics on a file like this one (by its
   * language): false for a plain text file in an editor without a server for it. Answered at once, from what the
   * editor says about its languages and from every report seen so far. A file it answers false for is never waited
   * on: no server would report it.
   */
  reportsOn(path: string): boolean;
  /**
   * Makes the language servers analyse the files, waits until they have re-reported them and then stayed quiet for
   * a short while (at most `timeoutMs`; `settled` says whether that happened in time), and returns their
   * diagnostics then. With `requireChange`, only reports made while the editor shows the file's content on disk
   * count: a late report about the content before a change is not taken for one about the content after it.
   */
  settle(paths: readonly string[], options: SettleOptions): Promise<{ settled: boolean; files: FileDiagnostics[] }>;
  documentSymbols(path: string): Promise<DocumentSymbolNode[]>;
  workspaceSymbols(query: string): Promise<WorkspaceSymbol[]>;
  definition(path: string, position: TextPosition): Promise<EditorLocation[]>;
  references(path: string, position: TextPosition): Promise<EditorLocation[]>;
  /** Hover texts (Markdown or plain) at the position, and the range they describe. */
  hover(path: string, position: TextPosition): Promise<{ contents: string[]; range?: TextRange }[]>;
  rename(path: string, position: TextPosition, newName: string): Promise<RenameOutcome>;
  /**
   * The code actions for a range (the diagnostics it overlaps are passed to the servers), of a kind when given
   * (`quickfix` matches `quickfix.*` too). `resolve`: ask servers that compute edits lazily for them.
   */
  codeActions(path: string, range: TextRange, options: { readonly kind?: string; readonly resolve: boolean }): Promise<CodeActionInfo[]>;
  /**
   * The formatting edits of a file, or of a range of it, with the file's own editor settings (tab size, spaces):
   * undefined when no formatter is installed for its language.
   */
  formatEdits(path: string, range: TextRange | undefined): Promise<FileTextEdits | undefined>;
  /**
   * The call hierarchy at a position: the items there (none: not a callable), and the calls into (`incoming`) or out
   * of (`outgoing`) each.
   */
  callHierarchy(path: string, position: TextPosition, direction: 'incoming' | 'outgoing'): Promise<{ items: CallItem[]; edges: CallEdge[] }>;
  editorState(): EditorState;
}
