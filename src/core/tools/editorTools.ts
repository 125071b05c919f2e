import { diagnosticsTool } from './diagnostics';
import { editorContextTool } from './editorContext';
import { definitionTool, hoverTool, referencesTool } from './navigation';
import { renameSymbolTool } from './renameSymbol';
import { symbolsTool, workspaceSymbolsTool } from './symbols';
import type { AnyTool } from './tool';

/** The tools backed by the editor's language features (src/core/ports/languageFeatures.ts). */
export const editorTools: AnyTool[] = [diagnosticsTool, symbolsTool, workspaceSymbolsTool, definitionTool, referencesTool, hoverTool, editorContextTool, renameSymbolTool];
