import * as vscode from 'vscode';
import type { CallEdge, CallItem, CodeActionInfo, FileTextEdits, TextPosition, TextRange } from '../common/languageFeatures';
import { editorEditOf, fileTextEdits, fromPosition, pathOf, symbolKind, toDiagnostic, toRange } from './convert';

/**
 * Code actions, formatting and call hierarchies on VS Code's own commands (`vscode.executeCodeActionProvider`,
 * `vscode.executeFormatDocumentProvider`, `vscode.prepareCallHierarchy`, ...), so agents get what every installed
 * language server offers. Each loads the document first: the commands need its model (a file no editor has open has
 * none yet).
 */

/** Most actions one request resolves the edits of (servers that compute edits lazily compute them one by one). */
const RESOLVE_AT_MOST = 100;

function fromRange(r: TextRange): vscode.Range {
  return new vscode.Range(fromPosition(r.start), fromPosition(r.end));
}

async function load(path: string): Promise<vscode.Uri> {
  const uri = vscode.Uri.file(path);
  await vscode.workspace.openTextDocument(uri);
  return uri;
}

function isCommand(a: vscode.CodeAction | vscode.Command): a is vscode.Command {
  return typeof (a as vscode.Command).command === 'string';
}

export async function codeActionsAt(path: string, range: TextRange, options: { readonly kind?: string; readonly resolve: boolean }): Promise<CodeActionInfo[]> {
  const uri = await load(path);
  const found = await vscode.commands.executeCommand<(vscode.CodeAction | vscode.Command)[] | undefined>(
    'vscode.executeCodeActionProvider',
    uri,
    fromRange(range),
    options.kind,
    options.resolve ? RESOLVE_AT_MOST : undefined,
  );
  const out: CodeActionInfo[] = [];
  for (const a of found ?? []) {
    if (isCommand(a)) {
      out.push({ title: a.title, preferred: false, diagnostics: [], command: { id: a.command, title: a.title } });
      continue;
    }
    const edit = a.edit ? await editorEditOf(a.edit) : undefined;
    out.push({
      title: a.title,
      ...(a.kind ? { kind: a.kind.value } : {}),
      preferred: a.isPreferred === true,
      ...(a.disabled ? { disabled: a.disabled.reason } : {}),
      diagnostics: (a.diagnostics ?? []).map(toDiagnostic),
      ...(edit ? { edit: 'refused' in edit ? { refused: `the action ${edit.refused}` } : edit } : {}),
      ...(a.command ? { command: { id: a.command.command, title: a.command.title } } : {}),
    });
  }
  return out;
}

/** The formatting options the editor would use for the document: its open editor's, else the language's settings. */
function formattingOptions(doc: vscode.TextDocument): vscode.FormattingOptions {
  const shown = vscode.window.visibleTextEditors.find((e) => e.document === doc);
  const config = vscode.workspace.getConfiguration('editor', { uri: doc.uri, languageId: doc.languageId });
  const tabSize = typeof shown?.options.tabSize === 'number' ? shown.options.tabSize : config.get<number>('tabSize', 4);
  const insertSpaces = typeof shown?.options.insertSpaces === 'boolean' ? shown.options.insertSpaces : config.get<boolean>('insertSpaces', true);
  return { tabSize, insertSpaces };
}

export async function formattingEdits(path: string, range: TextRange | undefined): Promise<FileTextEdits | undefined> {
  const uri = vscode.Uri.file(path);
  const doc = await vscode.workspace.openTextDocument(uri);
  const options = formattingOptions(doc);
  const edits = range
    ? await vscode.commands.executeCommand<vscode.TextEdit[] | undefined>('vscode.executeFormatRangeProvider', uri, fromRange(range), options)
    : await vscode.commands.executeCommand<vscode.TextEdit[] | undefined>('vscode.executeFormatDocumentProvider', uri, options);
  // No provider: the command answers undefined. A formatter with nothing to change answers [].
  if (edits === undefined) return undefined;
  return fileTextEdits(uri, edits);
}

function toCallItem(item: vscode.CallHierarchyItem): CallItem {
  return {
    name: item.name,
    kind: symbolKind(item.kind),
    ...(item.detail ? { detail: item.detail } : {}),
    location: { path: pathOf(item.uri), range: toRange(item.selectionRange) },
  };
}

export async function callsAt(path: string, position: TextPosition, direction: 'incoming' | 'outgoing'): Promise<{ items: CallItem[]; edges: CallEdge[] }> {
  const uri = await load(path);
  const items = (await vscode.commands.executeCommand<vscode.CallHierarchyItem[] | undefined>('vscode.prepareCallHierarchy', uri, fromPosition(position))) ?? [];
  const edges: CallEdge[] = [];
  for (const item of items) {
    if (direction === 'incoming') {
      const calls = (await vscode.commands.executeCommand<vscode.CallHierarchyIncomingCall[] | undefined>('vscode.provideIncomingCalls', item)) ?? [];
      for (const c of calls) edges.push({ item: toCallItem(c.from), sites: c.fromRanges.map((r) => ({ path: pathOf(c.from.uri), range: toRange(r) })) });
    } else {
      const calls = (await vscode.commands.executeCommand<vscode.CallHierarchyOutgoingCall[] | undefined>('vscode.provideOutgoingCalls', item)) ?? [];
      for (const c of calls) edges.push({ item: toCallItem(c.to), sites: c.fromRanges.map((r) => ({ path: pathOf(item.uri), range: toRange(r) })) });
    }
  }
  return { items: items.map(toCallItem), edges };
}
