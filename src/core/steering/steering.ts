export type InstructionStatus = 'draft' | 'queued' | 'claimed' | 'done' | 'blocked';
export interface WorkView { readonly id: string; readonly workspace_id: string; readonly title: string; readonly status: 'open' | 'finished';
  readonly opened_at: string; readonly finished_at?: string; readonly session?: string; /** opaque baseline captured at work_open, see WorkBaseline */ readonly baseline?: string; }
export interface InstructionView { readonly id: string; readonly work_id: string; readonly text: string; readonly status: InstructionStatus;
  readonly created_at: string; readonly queued_at?: string; readonly claimed_at?: string; readonly completed_at?: string; readonly note?: string; readonly revision: number; }
export interface SteeringCounts { readonly draft: number; readonly queued: number; readonly claimed: number; readonly done: number; readonly blocked: number; }
/** What the developer (panel, command, /inbox) may do. Never approves, never changes settings. */
export interface Steering {
  works(filter?: { status?: 'open' | 'finished' }): WorkView[];
  work(id: string): WorkView | undefined;
  instructions(workId: string): InstructionView[];
  counts(workId: string): SteeringCounts;
  createDraft(workId: string, text: string, opts?: { queue?: boolean; idempotencyKey?: string }): Promise<InstructionView>;
  editDraft(instructionId: string, text: string, expectedRevision?: number): Promise<InstructionView>;
  deleteDraft(instructionId: string): Promise<void>;
  queue(instructionId: string): Promise<InstructionView>;
  /** Fires after every change (work opened/finished, instruction created/edited/deleted/queued/claimed/completed). */
  onDidChange(listener: (e: SteeringChange) => void): { dispose(): void };
}
export type SteeringChange =
  | { kind: 'work'; work: WorkView }
  | { kind: 'instruction'; instruction: InstructionView }
  | { kind: 'instruction_deleted'; id: string; work_id: string };
/** Port (implemented in src/node by "steer-ui") to capture the workspace content at work_open, so a work review can diff from it. */
export interface WorkBaseline {
  /** Captures the current content of the workspace folder; returns an opaque ref (stored on the work), or undefined when it cannot (then the review falls back to the patch ledger's before-versions). Must not change the user's git index, HEAD or working tree. */
  capture(workspaceRoot: string): Promise<string | undefined>;
}
