import { execCommandTool } from './execCommand';
import { processResizeTool } from './processResize';
import { processStatusTool } from './processStatus';
import { readProcessTool } from './readProcess';
import { terminateProcessTool } from './terminateProcess';
import type { AnyTool } from './tool';
import { writeStdinTool } from './writeStdin';

/** The process tools (TOOLS.md "Processes"), in the order tools/list shows them. */
export const processTools: AnyTool[] = [execCommandTool, readProcessTool, processStatusTool, writeStdinTool, processResizeTool, terminateProcessTool];
