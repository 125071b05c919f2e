import type { Disposable } from '../../base/disposable';
import type { Decider, HoldCommand, HoldView, ProposalFile } from '../approvals/hold';
import type { ProcessExitedEvent } from '../ledger/execLog';

/** What an operation is, in a line: enough for an activity list. */
export interface OperationSummary {
  /** Unique per run of the runner (not the ledger's operation_id, which only patches have). */
  readonly run_id: string;
  /** The tool the operation came from (its name). */
  readonly tool: string;
  readonly workspace_id: string;
  /** "apply_patch: 2 files (src/a.ts, src/b.ts)", "exec_command: npm test". */
  readonly title: string;
  readonly at: string;
  /** The work (steering) the call named, if any. */
  readonly work_id?: string;
  /**
   * Present when the operation's intent carries files a diff can show (a patch's does): its hold can be reviewed,
   * and a check_only run of it is a preview. Set from the operation's own prepared intent, never from its name.
   */
  readonly reviewable?: true;
}

/**
 * The one typed event stream of the operation runner. The panel, the status bar and the tests consume it; nothing
 * else reports what agents do.
 */
export type RunnerEvent =
  | { readonly type: 'operation.prepared'; readonly operation: OperationSummary }
  | { readonly type: 'operation.held'; readonly operation: OperationSummary; readonly hold: HoldView }
  | { readonly type: 'operation.granted'; readonly approval_id: string; readonly by: Decider; readonly at: string }
  | { readonly type: 'operation.denied'; readonly approval_id: string; readonly by: Decider; readonly note?: string; readonly at: string }
  | { readonly type: 'operation.stale'; readonly approval_id: string; readonly reason: string; readonly at: string }
  | {
      readonly type: 'operation.committed';
      readonly operation: OperationSummary;
      readonly status: string;
      readonly approval_id?: string;
      readonly process_id?: string;
      readonly operation_id?: string;
      /** exec_command: what was started. */
      readonly command?: HoldCommand;
    }
  | { readonly type: 'operation.failed'; readonly operation: OperationSummary; readonly code: string; readonly message: string; readonly approval_id?: string }
  | { readonly type: 'process.started'; readonly process_id: string; readonly workspace_id: string; readonly command: readonly string[]; readonly tty: boolean; readonly started_at: string }
  | ProcessExitedEvent;

/** What the editor reads of the runner: the live stream, recent history (after a reload of the panel), previews. */
export interface Activity {
  /** Every runner event as it happens. */
  onEvent(listener: (event: RunnerEvent) => void): Disposable;
  /** The most recent events, oldest first (bounded: the latest 500). */
  recent(): readonly RunnerEvent[];
  /**
   * Content of a recent `check_only` preview (the `run_id` of its operation.committed event with status
   * `checked`), for the same diff view as a hold; undefined once it has rolled off (the latest 16 are kept).
   */
  preview(runId: string): readonly ProposalFile[] | undefined;
}
