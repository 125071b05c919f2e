/**
 * The ledger's record kinds, each with the schema its journal lines are checked against when read back: patch
 * operations (the operation ledger), approval holds (the approvals service) and commands (the exec log). A line
 * that does not match is never trusted; its owner logs it and keeps it verbatim or skips it.
 */
import { z } from 'zod';

const fileKind = z.enum(['add', 'update', 'delete', 'move']);
const hashOrNull = z.string().nullable();
const fileMode = z.number().int().min(0).max(0o7777);

export const operationFileSchema = z.object({
  path: z.string(),
  kind: fileKind,
  move_to: z.string().optional(),
  before_version: z.string().optional(),
  after_version: z.string().optional(),
});

export const patchRecordSchema = z.object({
  operation_id: z.string(),
  operation_key: z.string(),
  args_hash: z.string(),
  kind: z.literal('patch'),
  workspace_id: z.string(),
  work_id: z.string().optional(),
  created_at: z.string(),
  finished_at: z.string().optional(),
  status: z.enum(['pending', 'applied', 'failed', 'failed_partial', 'not_applied', 'unknown', 'checked']),
  files: z.array(operationFileSchema.passthrough()),
  changes: z.array(
    z
      .object({
        path: z.string(),
        kind: fileKind,
        before_hash: hashOrNull,
        after_hash: hashOrNull,
        before_mode: fileMode.optional(),
        after_mode: fileMode.optional(),
        created_folders: z.array(z.string()).optional(),
      })
      .passthrough(),
  ),
  events: z.array(
    z
      .object({
        type: z.string(),
        at: z.string(),
        status: z.string().optional(),
        reason: z.string().optional(),
        evidence: z.array(z.object({ path: z.string(), expected_before: hashOrNull, expected_after: hashOrNull, found: hashOrNull })).optional(),
      })
      .passthrough(),
  ),
  result: z.unknown().optional(),
});

/** A reviewer's line comment (src/kernel/approvals/reviewComments.ts checks it; the tools' output schemas use this short form). */
export const reviewCommentSchema = z.object({
  path: z.string(),
  /** Absent in comments recorded before sides existed: those were on the new side. */
  side: z.enum(['old', 'new']).optional(),
  range: z.object({ start_line: z.number(), end_line: z.number() }),
  quoted: z.string(),
  body: z.string(),
});

/** A rewind of a work's files told to its agent (src/features/review/common; the steer_claim_next output uses this short form). */
export const rewindNoticeSchema = z.object({
  action: z.enum(['rewind', 'redo']),
  checkpoint: z.number(),
  operation_id: z.string().optional(),
  files: z.array(z.object({ path: z.string(), version: z.string().nullable() })),
});

/** The sessions and agent ids that made a work or asked for a hold (src/kernel/identity.ts, Authors). */
export const authorsSchema = z.object({ sessions: z.array(z.string()), agents: z.array(z.string()) });

/** A hold as the editor and the approval tools show it. */
export const holdViewSchema = z.object({
  approval_id: z.string().min(1),
  tool: z.string().min(1),
  workspace_id: z.string(),
  state: z.enum(['pending', 'granted', 'denied', 'stale', 'resuming', 'consumed', 'ambiguous']),
  reason: z.enum(['confirm', 'sensitive', 'explicit']),
  created_at: z.string(),
  decided_at: z.string().optional(),
  decided_by: z.enum(['reviewer', 'agent']).optional(),
  /** The agent (name) that asked for the hold, when it connected with its own credential. */
  requested_by_agent: z.string().optional(),
  /** The agent that decided (`decided_by: "agent"` with an agent credential): its name. */
  decided_by_agent: z.string().optional(),
  note: z.string().optional(),
  stale_reason: z.string().optional(),
  files: z
    .array(
      z.object({
        path: z.string(),
        kind: fileKind,
        move_to: z.string().optional(),
        before_version: z.string().optional(),
        proposed_version: z.string().optional(),
        added: z.number().int().nonnegative(),
        removed: z.number().int().nonnegative(),
        sensitive: z.boolean(),
      }),
    )
    .optional(),
  command: z
    .object({
      argv: z.array(z.string()),
      cwd: z.string(),
      tty: z.boolean(),
      occupancy: z.enum(['exclusive', 'shared']),
      env_changes: z.record(z.string(), z.string().nullable()),
    })
    .optional(),
  sensitive_paths: z.array(z.string()),
  operation_key: z.string().optional(),
});

/** A hold as the ledger keeps it: the view plus what resuming needs. */
export const holdRecordSchema = holdViewSchema.extend({
  /** The reviewer's line comments of a Request Changes (the hold is denied; a resume answers changes_requested). */
  comments: z.array(reviewCommentSchema).optional(),
  request: z.record(z.string(), z.unknown()),
  request_hash: z.string(),
  /** Every session and agent (id) that asked for this request: none of them may resolve it (src/kernel/identity.ts). */
  authors: authorsSchema.optional(),
  result: z.unknown().optional(),
  error: z.object({ code: z.string(), message: z.string(), hint: z.string().optional(), details: z.record(z.string(), z.unknown()).optional() }).optional(),
});

export const execRecordSchema = z.object({
  operation_id: z.string(),
  kind: z.literal('exec'),
  process_id: z.string(),
  workspace_id: z.string(),
  work_id: z.string().optional(),
  approval_id: z.string().optional(),
  command: z.array(z.string()),
  /** Workspace-relative working directory ('' for the root). */
  cwd: z.string(),
  tty: z.boolean(),
  occupancy: z.enum(['exclusive', 'shared']),
  started_at: z.string(),
  /** `running` until it exits; `interrupted` when the extension host ended before its exit was recorded. */
  state: z.enum(['running', 'exited', 'interrupted']),
  ended_at: z.string().optional(),
  termination: z.string().optional(),
  exit_code: z.number().optional(),
  signal: z.string().optional(),
});

/** A work (steering): one logical task an agent opened in a workspace. */
export const workRecordSchema = z.object({
  id: z.string().min(1),
  workspace_id: z.string(),
  title: z.string(),
  status: z.enum(['open', 'finished']),
  opened_at: z.string(),
  finished_at: z.string().optional(),
  /** Set when the developer discarded the work (CodeSpace: Discard Work…). */
  discarded_at: z.string().optional(),
  session: z.string().optional(),
  /** The agent that opened the work (with its own credential): id and name. */
  agent: z.object({ id: z.string(), name: z.string() }).optional(),
  baseline: z.string().optional(),
  /** A work with its own git worktrees (absent: it edits the workspace folders themselves). */
  worktrees: z
    .array(z.object({ workspace_id: z.string(), root: z.string(), top: z.string(), branch: z.string(), base: z.string(), removed_at: z.string().optional() }))
    .optional(),
  /** MCP sessions whose write or command calls named the work (they cannot review it). */
  editors: z.array(z.string()).optional(),
  /** Agent ids whose write or command calls named the work, from any session (they cannot review it either). */
  editor_agents: z.array(z.string()).optional(),
  /** Set while the work is frozen: its checkpoint, one digest per repository and the work's digest over them. */
  frozen: z
    .object({
      digest: z.string(),
      at: z.string(),
      repos: z.array(z.object({ workspace_ids: z.array(z.string()), top: z.string(), head: z.string(), digest: z.string(), changed: z.boolean() })),
    })
    .optional(),
  /** Reviews of the work's checkpoints, oldest first: each bound to the digest it reviewed. */
  reviews: z
    .array(z.object({ digest: z.string(), approved: z.boolean(), by: z.string(), at: z.string(), findings: z.string().optional(), session: z.string().optional(), agent_id: z.string().optional(), agent: z.string().optional() }))
    .optional(),
  /** The reviewed commit of a frozen digest: the commit made (or found) per workspace. */
  committed: z.object({ digest: z.string(), at: z.string(), commits: z.array(z.object({ workspace_id: z.string(), commit: z.string() })) }).optional(),
  /** The delivery of the reviewed commit: per repository, the pushed task branch and its pull request (or compare URL). */
  delivered: z
    .array(z.object({ workspace_id: z.string(), remote: z.string(), branch: z.string(), commit: z.string(), at: z.string(), pr_url: z.string().optional(), compare_url: z.string().optional(), pr_note: z.string().optional() }))
    .optional(),
});

/** A developer's instruction to a work (steering); `deleted_at` marks a deleted draft kept for its idempotency key. */
export const instructionRecordSchema = z.object({
  id: z.string().min(1),
  work_id: z.string().min(1),
  text: z.string(),
  status: z.enum(['draft', 'queued', 'claimed', 'done', 'blocked']),
  created_at: z.string(),
  queued_at: z.string().optional(),
  claimed_at: z.string().optional(),
  completed_at: z.string().optional(),
  note: z.string().optional(),
  revision: z.number().int().positive(),
  /** Position in the queue: assigned when queued, increasing; claims take the smallest. */
  seq: z.number().int().nonnegative().optional(),
  claimed_by: z.string().optional(),
  /** The agent (name) that claimed it, when it connected with its own credential. */
  claimed_by_agent: z.string().optional(),
  idempotency_key: z.string().optional(),
  request_hash: z.string().optional(),
  deleted_at: z.string().optional(),
  kind: z.enum(['review_comments', 'rewind']).optional(),
  comments: z.array(reviewCommentSchema).optional(),
  rewind: rewindNoticeSchema.optional(),
});

/** Journal line types and versions, one per record kind. */
export const LINE_TYPES = {
  patch: { type: 'patch_operation', v: 1 },
  hold: { type: 'approval_hold', v: 1 },
  exec: { type: 'exec_operation', v: 1 },
  work: { type: 'steer_work', v: 1 },
  instruction: { type: 'steer_instruction', v: 1 },
} as const;

export type PatchRecordLine = z.infer<typeof patchRecordSchema>;
export type HoldRecordLine = z.infer<typeof holdRecordSchema>;
export type ExecRecord = z.infer<typeof execRecordSchema>;
export type WorkRecord = z.infer<typeof workRecordSchema>;
export type InstructionRecord = z.infer<typeof instructionRecordSchema>;
