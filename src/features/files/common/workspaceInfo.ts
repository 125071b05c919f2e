import { z } from 'zod';
import type { ApprovalService } from '../../../kernel/approvals/approvalService';
import type { Limits } from '../../../kernel/limits';
import type { WorkspaceRegistry } from '../../../kernel/workspaces';
import type { CommandIsolation } from '../../processes';
import type { ProcessCapabilities } from '../../processes';
import { defineTool } from '../../../kernel/tool';
import { DEBUGGEE_NOT_SANDBOXED } from '../../debug';
import type { ToolGroups } from '../../../kernel/toolGroups';

/** What workspace_info reports on. */
export interface WorkspaceInfoDeps {
  readonly workspaces: WorkspaceRegistry;
  readonly toolGroups: Pick<ToolGroups, 'state' | 'notes'>;
  readonly limits: () => Limits;
  /** What process support this host has (a backend may fail to load). */
  readonly processCapabilities: () => ProcessCapabilities;
  readonly approvals: Pick<ApprovalService, 'policy'>;
  /** Whether commands run in a sandbox, and with what network. */
  readonly isolation: CommandIsolation;
  /** The editor's debugger is there (debug_start): its debuggee runs unsandboxed, so every start is held. */
  readonly debugger?: () => boolean;
}

const workspaceSummary = z.object({
  id: z.string(),
  name: z.string(),
  trusted: z.boolean(),
  profile: z.enum(['read-only', 'write', 'exec']),
});

const execution = z.object({
  files: z.object({
    read: z.object({ available: z.boolean() }),
    write: z.object({ available: z.boolean() }),
  }),
  process: z.object({
    available: z.boolean(),
    capabilities: z.object({ pty: z.boolean(), resize: z.boolean(), lifetime: z.string() }),
    // Which node-pty runs terminal processes: VS Code's own copy, the bundled one, or none (with the reason).
    pty: z
      .object({ available: z.boolean(), source: z.enum(['vscode', 'bundled', 'none']), version: z.string().optional(), reason: z.string().optional() })
      .optional(),
  }),
  isolation: z.object({
    command_sandbox: z.object({ enabled: z.boolean(), kind: z.enum(['bubblewrap', 'none']), reason: z.string().optional() }),
    // With a sandbox: what the next command in this folder cannot change, what it may write in .git, its process bound.
    protected: z.array(z.object({ path: z.string(), kind: z.enum(['read-only-dir', 'read-only-file', 'masked-missing', 'writable-pinned']) })).optional(),
    // Whether the sandbox established all it protects (a scan that could not finish, a protected file with other names...).
    protection: z
      .object({ complete: z.boolean(), gaps: z.array(z.string()), on_incomplete: z.enum(['refuse', 'protectKnown']), commands: z.enum(['run', 'refused', 'run-protecting-known']) })
      .optional(),
    // Whether the editor's git opens, by itself, a repository a command creates, and what no setting covers.
    new_repositories: z
      .object({ editor_git: z.enum(['closed', 'open']), settings: z.record(z.string(), z.unknown()), reason: z.string().optional(), remaining: z.array(z.string()) })
      .optional(),
    git_writes: z.enum(['none', 'commit']).optional(),
    max_processes: z.object({ limit: z.number().nullable(), reason: z.string().optional() }).optional(),
    unix_sockets: z.object({ blocked: z.boolean(), method: z.enum(['seccomp']).optional(), reason: z.string().optional() }).optional(),
    // debug_start: its debuggee runs outside the command sandbox, so every start is held for the developer.
    debuggee: z.object({ sandboxed: z.boolean(), start: z.enum(['held']) }).optional(),
  }),
  network: z.enum(['allowed', 'blocked', 'domains', 'unknown']),
  // With `domains`: the domain patterns sandboxed commands may reach through the network proxy.
  allowed_domains: z.array(z.string()).optional(),
  approvals: z.object({
    patches: z.enum(['off', 'sensitive', 'confirm']),
    commands: z.enum(['off', 'confirm']),
    agent_may_resolve: z.boolean(),
  }),
});

export const workspaceInfoTool = defineTool({
  name: 'workspace_info',
  title: 'Workspace information',
  description:
    'Start here. Without workspace_id: the open workspace folders and their ids. With one: what is allowed there now ' +
    '(profile, trust, commands and sandbox, approvals, limits). Both say which tool groups are turned off.',
  kind: 'inspect',
  input: {
    workspace_id: z.string().min(1).optional(),
  },
  output: {
    workspaces: z.array(workspaceSummary).optional(),
    workspace_id: z.string().optional(),
    name: z.string().optional(),
    trusted: z.boolean().optional(),
    profile: z.enum(['read-only', 'write', 'exec']).optional(),
    execution: execution.optional(),
    limits: z
      .object({ read_bytes: z.number(), find_results: z.number(), retained_output_bytes: z.number() })
      .optional(),
    notes: z.array(z.string()).optional(),
    /** Present when the operator turned tool groups off (codespace.tools.disabledGroups): they are not served. */
    tools_off: z.object({ groups: z.array(z.string()), tools: z.array(z.string()) }).optional(),
  },
  create: (deps: WorkspaceInfoDeps) => async (args) => {
    const { workspaces } = deps;
    const groups = deps.toolGroups.state();
    const toolsOff = groups.disabled.length > 0 ? { tools_off: { groups: [...groups.disabled], tools: [...groups.tools] } } : {};
    if (args.workspace_id === undefined) {
      return {
        workspaces: workspaces.list().map((w) => ({ id: w.id, name: w.name, trusted: w.trusted, profile: w.profile })),
        ...toolsOff,
      };
    }
    const ws = workspaces.get(args.workspace_id);
    const limits = deps.limits();
    const proc = deps.processCapabilities();
    const policy = deps.approvals.policy();
    const isolation = await deps.isolation.status(ws.canExec ? ws.root : undefined);
    const processAvailable = proc.available && ws.canExec && !isolation.refusing;
    const notes: string[] = [];
    if (!ws.trusted) notes.push('Restricted Mode: the developer has not trusted this workspace, so agents may only read. No patch is written and no process starts.');
    else if (ws.profile === 'read-only') notes.push('Profile read-only: agents may only read.');
    else if (ws.profile === 'write') notes.push('Profile write: patches allowed, commands disabled.');
    if (!proc.available && ws.canExec) notes.push('Processes are not available in this host.');
    notes.push(...deps.toolGroups.notes());
    const debuggerServed = deps.debugger?.() === true;
    if (debuggerServed && ws.canExec) notes.push(`debug_start is always held for the developer's approval: ${DEBUGGEE_NOT_SANDBOXED}.`);
    if (ws.canExec && isolation.refusing) {
      // A working sandbox that still refuses: its network relay cannot start (`codespace.exec.network` "domains"), or
      // the Unix-socket filter cannot be applied (`codespace.exec.unixSockets` "block").
      if (isolation.command_sandbox.enabled) notes.push(`Commands are refused: ${isolation.command_sandbox.reason ?? 'unknown reason'}.`);
      else notes.push(`Commands are refused: the developer requires a command sandbox and none can run here (${isolation.command_sandbox.reason ?? 'unknown reason'}).`);
    }
    return {
      workspace_id: ws.id,
      name: ws.name,
      trusted: ws.trusted,
      profile: ws.profile,
      execution: {
        files: { read: { available: true }, write: { available: ws.canWrite } },
        process: {
          available: processAvailable,
          capabilities: { pty: proc.pty && processAvailable, resize: proc.resize && processAvailable, lifetime: proc.lifetime },
          ...(proc.ptyOrigin ? { pty: { available: proc.pty, ...proc.ptyOrigin } } : {}),
        },
        isolation: {
          command_sandbox: { ...isolation.command_sandbox },
          ...(isolation.protected ? { protected: isolation.protected.map((p) => ({ ...p })) } : {}),
          ...(isolation.protection ? { protection: { ...isolation.protection, gaps: [...isolation.protection.gaps] } } : {}),
          ...(isolation.new_repositories ? { new_repositories: { ...isolation.new_repositories, settings: { ...isolation.new_repositories.settings }, remaining: [...isolation.new_repositories.remaining] } } : {}),
          ...(isolation.git_writes ? { git_writes: isolation.git_writes } : {}),
          ...(isolation.max_processes ? { max_processes: { ...isolation.max_processes } } : {}),
          ...(isolation.unix_sockets ? { unix_sockets: { ...isolation.unix_sockets } } : {}),
          ...(debuggerServed ? { debuggee: { sandboxed: false, start: 'held' as const } } : {}),
        },
        network: isolation.network,
        ...(isolation.allowed_domains ? { allowed_domains: [...isolation.allowed_domains] } : {}),
        approvals: { patches: policy.patches, commands: policy.commands, agent_may_resolve: policy.agentMayResolve },
      },
      limits: { read_bytes: limits.readBytes, find_results: limits.findResults, retained_output_bytes: limits.retainedOutputBytes },
      notes,
      ...toolsOff,
    };
  },
});
