import type { Limits } from '../../../kernel/limits';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import type { ContentSearch } from './contentSearch';
import type { WorkspaceFs } from '../../../base/workspaceFs';
import type { SecretRedactor } from '../../../base/secretRedactor';
import { findTool } from './find';
import { readTool } from './read';
import { searchTool } from './search';
import type { AnyTool } from '../../../kernel/tool';

/** What the file tools (find, read, search) use; each takes exactly its part. */
export interface FileToolDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly limits: () => Limits;
  /** Content search (the `search` tool): ripgrep and the editor's search settings. */
  readonly search: ContentSearch;
  /** Redacts credentials from the lines search returns. */
  readonly redactor: SecretRedactor;
}

/** The file tools (TOOLS.md "Files"), in the order tools/list shows them. */
export const FILE_TOOLS = [findTool, readTool, searchTool] as const;

export function fileTools(deps: FileToolDeps): AnyTool[] {
  return [findTool.create(deps), readTool.create(deps), searchTool.create(deps)];
}
