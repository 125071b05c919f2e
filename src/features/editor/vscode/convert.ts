import * as vscode from 'vscode';
import type { DiagnosticSeverity, DocumentSymbolNode, EditorDiagnostic, EditorEdit, EditorLocation, FileTextEdits, TextPosition, TextRange } from '../common/languageFeatures';

/** Conversions between VS Code's types (0-based positions) and the port's plain ones (1-based). */

const SEVERITY: Record<vscode.DiagnosticSeverity, DiagnosticSeverity> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'information',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

export function toPosition(p: vscode.Position): TextPosition {
  return { line: p.line + 1, character: p.character + 1 };
}

export function toRange(r: vscode.Range): TextRange {
  return { start: toPosition(r.start), end: toPosition(r.end) };
}

export function fromPosition(p: TextPosition): vscode.Position {
  return new vscode.Position(p.line - 1, p.character - 1);
}

export function pathOf(uri: vscode.Uri): string | undefined {
  return uri.scheme === 'file' ? uri.fsPath : undefined;
}

export function symbolKind(kind: vscode.SymbolKind): string {
  return vscode.SymbolKind[kind] ?? String(kind);
}

export function codeOf(code: vscode.Diagnostic['code']): string | undefined {
  if (code === undefined) return undefined;
  return typeof code === 'object' ? String(code.value) : String(code);
}

export function toDiagnostic(d: vscode.Diagnostic): EditorDiagnostic {
  const code = codeOf(d.code);
  return {
    range: toRange(d.range),
    severity: SEVERITY[d.severity] ?? 'information',
    message: d.message,
    ...(d.source !== undefined ? { source: d.source } : {}),
    ...(code !== undefined ? { code } : {}),
  };
}

export function toLocation(l: vscode.Location | vscode.LocationLink): EditorLocation {
  if ('targetUri' in l) return { path: pathOf(l.targetUri), range: toRange(l.targetSelectionRange ?? l.targetRange) };
  return { path: pathOf(l.uri), range: toRange(l.range) };
}

export function hoverText(c: vscode.MarkdownString | vscode.MarkedString): string {
  if (typeof c === 'string') return c;
  if (c instanceof vscode.MarkdownString) return c.value;
  return `\`\`\`${c.language}\n${c.value}\n\`\`\``;
}

export function isDocumentSymbol(s: vscode.DocumentSymbol | vscode.SymbolInformation): s is vscode.DocumentSymbol {
  return 'children' in s && 'selectionRange' in s;
}

export function toSymbolNode(s: vscode.DocumentSymbol | vscode.SymbolInformation): DocumentSymbolNode {
  if (isDocumentSymbol(s)) {
    return {
      name: s.name,
      kind: symbolKind(s.kind),
      ...(s.detail ? { detail: s.detail } : {}),
      range: toRange(s.range),
      selectionRange: toRange(s.selectionRange),
      children: (s.children ?? []).map(toSymbolNode),
    };
  }
  const range = toRange(s.location.range);
  return { name: s.name, kind: symbolKind(s.kind), ...(s.containerName ? { detail: s.containerName } : {}), range, selectionRange: range, children: [] };
}

export function openDocument(uri: vscode.Uri): vscode.TextDocument | undefined {
  return vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
}

/**
 * A WorkspaceEdit's text edits per file, each with the document's text as the editor holds it (the core compares it
 * with the bytes on disk), or why it cannot be read: an edit of a document that is not a file.
 */
export async function editorEditOf(edit: vscode.WorkspaceEdit): Promise<EditorEdit | { refused: string }> {
  const entries = edit.entries();
  const files: FileTextEdits[] = [];
  for (const [uri, edits] of entries) {
    const p = pathOf(uri);
    if (p === undefined) return { refused: `would edit ${uri.scheme}: document ${uri.path}, which is not a file` };
    files.push(await fileTextEdits(uri, edits));
  }
  // `size` counts resources with text or file operations; `entries()` lists only text edits.
  return { edits: files, fileOperations: Math.max(0, edit.size - entries.length) };
}

/** One file's edits, with its document's text and whether it has unsaved changes. */
export async function fileTextEdits(uri: vscode.Uri, edits: readonly vscode.TextEdit[]): Promise<FileTextEdits> {
  let doc: vscode.TextDocument | undefined;
  try {
    doc = openDocument(uri) ?? (await vscode.workspace.openTextDocument(uri));
  } catch {
    doc = undefined;
  }
  return {
    path: uri.fsPath,
    edits: edits.map((e) => ({ range: toRange(e.range), newText: e.newText })),
    documentText: doc?.getText(),
    dirty: doc?.isDirty ?? false,
  };
}
