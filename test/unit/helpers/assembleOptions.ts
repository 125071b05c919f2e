import { silentLogger } from '../../../src/base/logger';
import { DEFAULT_LIMITS } from '../../../src/kernel/limits';
import type { WorkspaceRegistry } from '../../../src/kernel/workspaces';
import type { AssembleOptions, AssembledServices } from '../../../src/app/assembleServices';
import type { AnyTool, ToolContract } from '../../../src/kernel/tool';
import { NodeWorkspaceFs } from '../../../src/kernel/node/nodeWorkspaceFs';

/**
 * What a plain-Node test assembles the services with, unless it says otherwise: the real file system, no log, the
 * default limits, a PATH of its own and nothing else in the environment, no command timeout. `overrides` adds to
 * these or replaces them (a spying file system, a fake language, fault injection...).
 */
export function unitAssembleOptions(workspaces: WorkspaceRegistry, storageDir: string, overrides: Partial<AssembleOptions> = {}): AssembleOptions {
  return {
    workspaces,
    fs: new NodeWorkspaceFs(),
    logger: silentLogger,
    limits: () => DEFAULT_LIMITS,
    storageDir,
    env: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' }),
    timeoutMs: () => 0,
    lifetime: 'unit-test',
    ...overrides,
  };
}

/** The catalogue's tool `contract` as the assembly created it (its handler closed over what the assembly built). */
export function createdTool(assembled: Pick<AssembledServices, 'tools'>, contract: Pick<ToolContract, 'name'>): AnyTool {
  const tool = assembled.tools.find((t) => t.name === contract.name);
  if (!tool) throw new Error(`The assembly created no tool ${contract.name}.`);
  return tool;
}
