import type { DiagnosticsFeed } from './diagnosticsFeed';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import type { LanguageFeatures } from './languageFeatures';
import type { Logger } from '../../../base/logger';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { OperationRunner } from '../../../kernel/runner/operationRunner';
import { diagnosticsTool } from './diagnostics';
import { editorContextTool } from './editorContext';
import { definitionTool, hoverTool, referencesTool } from './navigation';
import { renameSymbolTool } from './renameSymbol';
import { applyCodeActionTool, codeActionsTool, formatTool } from './codeEdits';
import { callHierarchyTool } from './callHierarchy';
import { symbolsTool, workspaceSymbolsTool } from './symbols';
import type { AnyTool } from '../../../kernel/tool';

/** What the editor tools use. */
export interface EditorToolDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  /** The editor's language features; undefined in a host without an editor (the editor tools answer UNAVAILABLE). */
  readonly language: LanguageFeatures | undefined;
  /** Follows what edits wrote, in the background, and hands each session the language servers' reports. */
  readonly diagnosticsFeed: DiagnosticsFeed;
  /** The default wait of `diagnostics`, in milliseconds. */
  readonly diagnosticsSettleMs: () => number;
  /** rename_symbol writes through apply_patch's own operation. */
  readonly runner: Pick<OperationRunner, 'run'>;
}

/** The tools backed by the editor's language features (src/features/editor/common/languageFeatures.ts), in tools/list order. */
export const EDITOR_TOOLS = [diagnosticsTool, symbolsTool, workspaceSymbolsTool, definitionTool, referencesTool, hoverTool, editorContextTool, renameSymbolTool] as const;

/** The tools that change code the way the language servers propose, and the call hierarchy (served on request). */
export const CODE_TOOLS = [codeActionsTool, applyCodeActionTool, formatTool, callHierarchyTool] as const;

export function editorTools(deps: EditorToolDeps): AnyTool[] {
  return [
    diagnosticsTool.create(deps),
    symbolsTool.create(deps),
    workspaceSymbolsTool.create(deps),
    definitionTool.create(deps),
    referencesTool.create(deps),
    hoverTool.create(deps),
    editorContextTool.create(deps),
    renameSymbolTool.create(deps),
    codeActionsTool.create(deps),
    applyCodeActionTool.create(deps),
    formatTool.create(deps),
    callHierarchyTool.create(deps),
  ];
}
