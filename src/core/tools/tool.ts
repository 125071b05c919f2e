import type { z } from 'zod';
import type { PatchService } from '../patch/patchService';
import type { Logger } from '../ports/logger';
import type { WorkspaceFs } from '../ports/workspaceFs';
import type { WorkspaceRegistry } from '../policy/workspaces';
import type { ToolKind } from '../toolKinds';

/** Operator limits, read fresh on every call so a settings change applies at once. */
export interface Limits {
  /** Most content bytes one `read` returns. */
  readonly readBytes: number;
  /** Most paths one `find` returns. */
  readonly findResults: number;
  /** Output bytes retained per process. */
  readonly retainedOutputBytes: number;
}

export const DEFAULT_LIMITS: Limits = { readBytes: 1024 * 1024, findResults: 2000, retainedOutputBytes: 256 * 1024 };

/** What a tool handler may use. Adapters fill it in; tools never see the SDK, express or vscode. */
export interface CoreServices {
  readonly workspaces: WorkspaceRegistry;
  readonly fs: WorkspaceFs;
  readonly logger: Logger;
  readonly limits: () => Limits;
  /** What process support this host has; absent when processes are not wired in. */
  readonly processCapabilities?: () => ProcessCapabilities;
  /** Patches and their ledger; absent in hosts without durable storage. */
  readonly patches?: PatchService;
  /** The process occupying a workspace exclusively, if any (blocks apply_patch). */
  readonly occupant?: (workspaceId: string) => Occupant | undefined;
}

/** A live process that holds a workspace. */
export interface Occupant {
  readonly process_id: string;
  readonly command: readonly string[];
}

/** Reported by workspace_info; must match what the process supervisor enforces. */
export interface ProcessCapabilities {
  /** A backend could be loaded (node-pty and/or pipes). */
  readonly available: boolean;
  readonly pty: boolean;
  readonly resize: boolean;
  /** What owns a process and so ends it. */
  readonly lifetime: string;
}

export interface ToolContext {
  readonly services: CoreServices;
  /** Aborted when the client cancels the request or the session closes. */
  readonly signal: AbortSignal;
}

/** A tool is data plus a handler; src/mcp loops over the catalogue and registers each. */
export interface ToolDefinition<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly kind: ToolKind;
  readonly input: I;
  readonly output: O;
  readonly handler: (args: z.output<z.ZodObject<I>>, ctx: ToolContext) => Promise<z.input<z.ZodObject<O>>>;
}

/** Identity helper that keeps each tool's argument and result types precise. */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(def: ToolDefinition<I, O>): ToolDefinition<I, O> {
  return def;
}

/** The catalogue type: tools with their own shapes, seen uniformly. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool = ToolDefinition<any, any>;
