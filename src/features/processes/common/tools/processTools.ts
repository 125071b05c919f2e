import type { ExecLog } from '../../../../kernel/ledger/execLog';
import type { WorkspaceRegistry } from '../../../../kernel/workspaces';
import type { WorkspaceFs } from '../../../../base/workspaceFs';
import type { ProcessCapabilities, ProcessSupervisor } from '../supervisor';
import { execCommandTool } from './execCommand';
import { processResizeTool } from './processResize';
import { processStatusTool } from './processStatus';
import { readProcessTool } from './readProcess';
import { terminateProcessTool } from './terminateProcess';
import type { AnyTool, ExecSettings, OperationDeps } from '../../../../kernel/tool';
import { writeStdinTool } from './writeStdin';

/** What the process tools use. */
export interface ProcessToolDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  /** Agent processes. */
  readonly processes: ProcessSupervisor;
  /** The ledger's durable record of every command started (how a command ended after a reload). */
  readonly execLog: ExecLog;
  readonly exec: ExecSettings;
  /** What process support this host has (a backend may fail to load). */
  readonly processCapabilities: () => ProcessCapabilities;
}

/** The process tools (TOOLS.md "Processes"), in the order tools/list shows them. */
export const PROCESS_TOOLS = [execCommandTool, readProcessTool, processStatusTool, writeStdinTool, processResizeTool, terminateProcessTool] as const;

export function processTools(deps: ProcessToolDeps & OperationDeps): AnyTool[] {
  return [
    execCommandTool.create(deps),
    readProcessTool.create(deps),
    processStatusTool.create(deps),
    writeStdinTool.create(deps),
    processResizeTool.create(deps),
    terminateProcessTool.create(deps),
  ];
}
