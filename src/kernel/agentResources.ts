// What a module offers agents beside its tools, said without any protocol: resources under a URI template (listed,
// read, completed and, when they change, announced), prompts, and what ends with an agent's session. The works
// module offers its instruction queues and the agent-loop prompt this way; src/mcp serves them in both revisions.
import type { z } from 'zod';
import type { Disposable } from '../base/disposable';

/** The values of one variable (or prompt argument) that begin with `value`; `context` holds the others given so far. */
export type Completer = (value: string, context?: { arguments?: Record<string, string> }) => string[] | Promise<string[]>;

/** One resource as a list names it. */
export interface ListedResource {
  readonly uri: string;
  readonly name: string;
  readonly title: string;
  readonly mimeType?: string;
}

/** What changed: a resource's content (`uri`), and whether the family's list changed with it. */
export interface ResourceChange {
  readonly uri: string;
  readonly listChanged: boolean;
}

/** A family of resources under one URI template, served by one module. */
export interface ResourceFamily {
  /** A short name, unique among the families. */
  readonly name: string;
  /** RFC 6570, e.g. `codespace://steering/{work_id}`. */
  readonly uriTemplate: string;
  /** What every URI of the family begins with: a subscription is matched to its family by it. */
  readonly uriPrefix: string;
  readonly title: string;
  readonly description: string;
  readonly mimeType?: string;
  /** The resources it names now. */
  list(): readonly ListedResource[];
  /** Completion of the template's variables. */
  readonly complete: Readonly<Record<string, Completer>>;
  /** One resource's content; throws (a ToolError) when `uri` names none. */
  read(uri: string, variables: Readonly<Record<string, string | readonly string[]>>): { readonly mimeType: string; readonly text: string };
  /**
   * Present on a family whose resources may be subscribed to: throws (a ToolError) when `uri` names none. Each
   * change it reports then reaches the subscribers of that URI.
   */
  requireExisting?(uri: string): void;
  /** Tells of every change of its resources. */
  onDidChange?(listener: (change: ResourceChange) => void): Disposable;
}

/** A prompt: its arguments (each optional, with its schema and, if any, its completion) and the text it gives. */
export interface PromptSource {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly args: Readonly<Record<string, { readonly schema: z.ZodTypeAny; readonly complete?: Completer }>>;
  text(args: Readonly<Record<string, string | undefined>>): string;
}

/** Everything the modules offer agents beside their tools. */
export interface AgentResources {
  readonly families: readonly ResourceFamily[];
  readonly prompts: readonly PromptSource[];
  /** Called when an agent's session ends (the 2025 revision's sessions): what it held is let go. */
  sessionEnded(session: string): void;
}
