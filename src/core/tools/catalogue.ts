import { applyPatchTool } from './applyPatch';
import { approvalTools } from './approvalTools';
import { findTool } from './find';
import { operationStatusTool } from './operationStatus';
import { processTools } from './processTools';
import { readTool } from './read';
import { searchTool } from './search';
import { steeringTools } from './steeringTools';
import type { AnyTool } from './tool';
import { workspaceInfoTool } from './workspaceInfo';
import { editorTools } from './editorTools';

/** Every tool the server offers, in the order tools/list shows them. */
export function toolCatalogue(): AnyTool[] {
  return [workspaceInfoTool, findTool, readTool, searchTool, applyPatchTool, operationStatusTool, ...approvalTools, ...processTools, ...steeringTools, ...editorTools];
}
