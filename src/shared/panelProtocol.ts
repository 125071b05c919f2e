/**
 * The messages between the CodeSpace panel page (src/webview-ui/panel.ts) and the extension host
 * (src/vscode/panel/). Both directions are discriminated unions on `type`. The host's state message is the whole
 * view model, authoritative: the page renders it and keeps nothing of its own but note drafts and scroll.
 *
 * Nothing here imports anything: the page is bundled for the browser, the host for Node.
 */

// ---------------------------------------------------------------------------------------------------------------
// The view model (host → page, inside `state`)
// ---------------------------------------------------------------------------------------------------------------

export type PanelFileKind = 'add' | 'update' | 'delete' | 'move';

/** One file of a held patch. */
export interface PanelHoldFile {
  readonly path: string;
  readonly kind: PanelFileKind;
  /** Destination of a move. */
  readonly moveTo?: string;
  readonly added: number;
  readonly removed: number;
  readonly sensitive: boolean;
}

/** One environment change of a held command: `value` null removes the variable. */
export interface PanelEnvChange {
  readonly key: string;
  readonly value: string | null;
}

/** A held command, in full. */
export interface PanelHoldCommand {
  readonly argv: readonly string[];
  /** Workspace-relative working directory ('' for the root). */
  readonly cwd: string;
  readonly tty: boolean;
  readonly occupancy: 'exclusive' | 'shared';
  readonly env: readonly PanelEnvChange[];
}

/** A hold the reviewer can act on (pending) or should know about (stale). */
export interface PanelHold {
  readonly approvalId: string;
  /** The held tool's name. */
  readonly tool: string;
  readonly workspaceId: string;
  readonly state: 'pending' | 'stale';
  readonly reason: 'confirm' | 'sensitive' | 'explicit';
  readonly createdAt: string;
  /** One line: the operation's title when the runner reported it, else made from the hold. */
  readonly title: string;
  readonly staleReason?: string;
  readonly files?: readonly PanelHoldFile[];
  readonly command?: PanelHoldCommand;
  readonly sensitivePaths: readonly string[];
  readonly canApprove: boolean;
  readonly canDeny: boolean;
  readonly canReview: boolean;
}

export type PanelActivityKind = 'prepared' | 'held' | 'granted' | 'denied' | 'stale' | 'committed' | 'failed';

/** One line of the activity list. */
export interface PanelActivity {
  /** Unique within one state message (a key for the page). */
  readonly key: string;
  readonly kind: PanelActivityKind;
  readonly at: string;
  readonly title: string;
  readonly tool?: string;
  readonly workspaceId?: string;
  /** Status, error code and message, decider, note: what to show after the title. */
  readonly detail?: string;
  readonly approvalId?: string;
  readonly runId?: string;
  /** Set on a committed apply_patch `check_only` preview whose content is still kept: the page offers Open Preview. */
  readonly previewRunId?: string;
  /** Set on a patch applied under a work: the page offers Rewind to Here (the work's files as right after it). */
  readonly checkpoint?: { readonly workId: string; readonly operationId: string };
}

/** An agent process, as the runner's process.started / process.exited events report it. */
export interface PanelProcess {
  readonly processId: string;
  readonly workspaceId: string;
  /** Undefined when the start event has rolled off the recent history. */
  readonly command?: readonly string[];
  readonly tty?: boolean;
  readonly state: 'running' | 'exited';
  readonly termination?: string;
  readonly exitCode?: number;
  readonly signal?: string;
  readonly startedAt?: string;
  readonly endedAt?: string;
  /** Exited processes whose start is known. */
  readonly durationMs?: number;
}

export type PanelInstructionStatus = 'draft' | 'queued' | 'claimed' | 'done' | 'blocked';

/**
 * One instruction of a work. `text` and `note` are data, shown as exact text: the page escapes control
 * characters and ANSI sequences visibly (see visibleText.ts) and never parses them as HTML.
 */
export interface PanelInstruction {
  readonly id: string;
  readonly workId: string;
  readonly text: string;
  readonly status: PanelInstructionStatus;
  readonly createdAt: string;
  readonly queuedAt?: string;
  readonly claimedAt?: string;
  readonly completedAt?: string;
  /** The agent's completion note (done or blocked). */
  readonly note?: string;
  /** Edits of a draft send it back, so an edit made elsewhere in between is not overwritten. */
  readonly revision: number;
  /** Drafts only: edit, delete, queue. */
  readonly editable: boolean;
  /** Blocked ones: the developer may put it back in the queue (after answering what blocked it, say). */
  readonly requeueable: boolean;
}

export interface PanelSteeringCounts {
  readonly draft: number;
  readonly queued: number;
  readonly claimed: number;
  readonly done: number;
  readonly blocked: number;
}

/** A unit of agent work (work_open … work_finish) and the developer's instructions for it. */
export interface PanelWork {
  readonly id: string;
  readonly workspaceId: string;
  readonly title: string;
  readonly status: 'open' | 'finished';
  readonly openedAt: string;
  readonly finishedAt?: string;
  readonly counts: PanelSteeringCounts;
  /** Oldest first (the latest MAX_INSTRUCTIONS_SHOWN). */
  readonly instructions: readonly PanelInstruction[];
  /** How a review of it is made: `git` (from the tree captured at work_open), `none` (no baseline: not a git folder). */
  readonly baseline: 'git' | 'none';
  /** A work in its own git worktrees: its task branch (absent: it edits the workspace folders themselves). */
  readonly branch?: string;
  /** It still holds a worktree (the developer can discard it). */
  readonly holdsWorktree?: boolean;
  /** Where its review and delivery stand (absent: not frozen, or reopened since). */
  readonly delivery?: PanelDelivery;
}

/**
 * A work's review and delivery: `frozen` (the checkpoint `digest`, shortened), `approved` or `rejected` (the latest
 * review of that checkpoint), `committed` (the reviewed commit made), `delivered` (task branches pushed, with the
 * pull request or compare URL of each repository).
 */
export interface PanelDelivery {
  readonly state: 'frozen' | 'approved' | 'rejected' | 'committed' | 'delivered';
  readonly digest?: string;
  readonly links?: readonly { readonly workspaceId: string; readonly branch: string; readonly url: string; readonly kind: 'pull_request' | 'compare' }[];
}

/** An agent with its own credential (Connect an Agent): what this window saw of it. Never the credential. */
export interface PanelAgent {
  readonly id: string;
  readonly name: string;
  /** Its open MCP sessions in this window. */
  readonly sessions: number;
  /** When its first request reached this window (absent: not since the window started). */
  readonly connectedAt?: string;
  readonly lastActivity?: string;
}

/** Everything the page shows. */
export interface PanelState {
  /** Pending holds (newest first), then stale ones (newest first). */
  readonly holds: readonly PanelHold[];
  /** Newest first. */
  readonly activity: readonly PanelActivity[];
  /** Running first, then exited; newest first within each. */
  readonly processes: readonly PanelProcess[];
  readonly pendingCount: number;
  /** Open works first (newest first), then recently finished ones. Absent when steering is not available. */
  readonly works?: readonly PanelWork[];
  /** Instructions queued and not yet claimed, over every open work. */
  readonly waitingInstructionCount?: number;
  readonly openWorkCount?: number;
  /** The agents with a credential, in the order they were issued. Absent when the window has no agent directory. */
  readonly agents?: readonly PanelAgent[];
}

// ---------------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------------

/** Page → host. Every message but `ready` is a request and gets exactly one `reply` while the view lives. */
export type PageMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'approve'; readonly requestId: string; readonly approvalId: string }
  | { readonly type: 'deny'; readonly requestId: string; readonly approvalId: string; readonly note: string }
  /** Sends the line comments written in the hold's review (with the note, if any): the hold ends, nothing is written. */
  | { readonly type: 'requestChanges'; readonly requestId: string; readonly approvalId: string; readonly note: string }
  | { readonly type: 'openReview'; readonly requestId: string; readonly approvalId: string }
  | { readonly type: 'openTerminal'; readonly requestId: string; readonly processId: string }
  | { readonly type: 'openPreview'; readonly requestId: string; readonly runId: string }
  /** Composer: a new instruction for a work, kept as a draft (`saveDraft`) or queued for the agent at once (`queueInstruction`). */
  | { readonly type: 'saveDraft'; readonly requestId: string; readonly workId: string; readonly text: string }
  | { readonly type: 'queueInstruction'; readonly requestId: string; readonly workId: string; readonly text: string }
  | { readonly type: 'editDraft'; readonly requestId: string; readonly instructionId: string; readonly text: string; readonly revision: number }
  | { readonly type: 'deleteDraft'; readonly requestId: string; readonly instructionId: string }
  | { readonly type: 'queueDraft'; readonly requestId: string; readonly instructionId: string }
  | { readonly type: 'requeueInstruction'; readonly requestId: string; readonly instructionId: string }
  | { readonly type: 'reviewWork'; readonly requestId: string; readonly workId: string }
  | { readonly type: 'discardWork'; readonly requestId: string; readonly workId: string }
  | { readonly type: 'rewindWork'; readonly requestId: string; readonly workId: string; readonly operationId: string }
  /** Revokes an agent's credential: its sessions close at once, its credential gets 401. */
  | { readonly type: 'revokeAgent'; readonly requestId: string; readonly agentId: string };

export type PageMessageType = PageMessage['type'];
export type PageRequest = Exclude<PageMessage, { type: 'ready' }>;

/** Host → page. */
export type HostMessage =
  | { readonly type: 'state'; readonly state: PanelState }
  | { readonly type: 'reply'; readonly requestId: string; readonly ok: boolean; readonly error?: string };

// ---------------------------------------------------------------------------------------------------------------
// Validation of what the page sends (the host trusts nothing that crosses the webview boundary)
// ---------------------------------------------------------------------------------------------------------------

export const MAX_ID_CHARS = 200;
export const MAX_REQUEST_ID_CHARS = 64;
export const MAX_NOTE_CHARS = 4000;
/** An instruction's text: at most this many UTF-8 bytes, and not blank. */
export const MAX_INSTRUCTION_BYTES = 16 * 1024;

const REQUEST_ID = /^[A-Za-z0-9_.:-]+$/;

type FieldKind = 'id' | 'requestId' | 'note' | 'text' | 'revision';

/** The fields each message type carries besides `type`, and how each is checked. */
const FIELDS: { readonly [K in PageMessageType]: readonly (readonly [string, FieldKind])[] } = {
  ready: [],
  approve: [['requestId', 'requestId'], ['approvalId', 'id']],
  deny: [['requestId', 'requestId'], ['approvalId', 'id'], ['note', 'note']],
  requestChanges: [['requestId', 'requestId'], ['approvalId', 'id'], ['note', 'note']],
  openReview: [['requestId', 'requestId'], ['approvalId', 'id']],
  openTerminal: [['requestId', 'requestId'], ['processId', 'id']],
  openPreview: [['requestId', 'requestId'], ['runId', 'id']],
  saveDraft: [['requestId', 'requestId'], ['workId', 'id'], ['text', 'text']],
  queueInstruction: [['requestId', 'requestId'], ['workId', 'id'], ['text', 'text']],
  editDraft: [['requestId', 'requestId'], ['instructionId', 'id'], ['text', 'text'], ['revision', 'revision']],
  deleteDraft: [['requestId', 'requestId'], ['instructionId', 'id']],
  queueDraft: [['requestId', 'requestId'], ['instructionId', 'id']],
  requeueInstruction: [['requestId', 'requestId'], ['instructionId', 'id']],
  reviewWork: [['requestId', 'requestId'], ['workId', 'id']],
  discardWork: [['requestId', 'requestId'], ['workId', 'id']],
  rewindWork: [['requestId', 'requestId'], ['workId', 'id'], ['operationId', 'id']],
  revokeAgent: [['requestId', 'requestId'], ['agentId', 'id']],
};

/** UTF-8 length of a string (TextEncoder exists in the page and in Node alike). */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).byteLength;
}

export type ParsedPageMessage =
  | { readonly ok: true; readonly message: PageMessage }
  /** `requestId` is set when the message carried a well-formed one, so the host can reply. */
  | { readonly ok: false; readonly error: string; readonly requestId?: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

function checkField(kind: FieldKind, value: unknown): string | undefined {
  if (kind === 'revision') {
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) return 'must be a non-negative integer';
    return undefined;
  }
  if (typeof value !== 'string') return `must be a string, not ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}`;
  switch (kind) {
    case 'requestId':
      if (value.length === 0 || value.length > MAX_REQUEST_ID_CHARS || !REQUEST_ID.test(value)) return `must be 1-${MAX_REQUEST_ID_CHARS} characters of [A-Za-z0-9_.:-]`;
      return undefined;
    case 'id':
      if (value.length === 0 || value.length > MAX_ID_CHARS) return `must be 1-${MAX_ID_CHARS} characters`;
      // eslint-disable-next-line no-control-regex
      if (/[\u0000-\u001f\u007f]/.test(value)) return 'must not contain control characters';
      return undefined;
    case 'note':
      if (value.length > MAX_NOTE_CHARS) return `must be at most ${MAX_NOTE_CHARS} characters`;
      return undefined;
    case 'text':
      if (value.trim() === '') return 'must not be empty';
      if (value.length > MAX_INSTRUCTION_BYTES || utf8Bytes(value) > MAX_INSTRUCTION_BYTES) return `must be at most ${MAX_INSTRUCTION_BYTES} bytes (UTF-8)`;
      return undefined;
  }
}

/**
 * Checks the shape and types of a message from the page: a known `type`, exactly the fields it carries, each a
 * string of bounded length (a draft's revision: a non-negative integer). It does not check that the ids name anything: the host does that against the
 * current holds and processes.
 */
export function parsePageMessage(raw: unknown): ParsedPageMessage {
  if (!isRecord(raw)) return { ok: false, error: 'a message must be a plain object' };
  const type = raw.type;
  if (typeof type !== 'string' || !Object.prototype.hasOwnProperty.call(FIELDS, type)) {
    return { ok: false, error: `unknown message type ${JSON.stringify(typeof type === 'string' ? type.slice(0, 40) : typeof type)}`, ...replyTo(raw) };
  }
  const fields = FIELDS[type as PageMessageType];
  const allowed = new Set(['type', ...fields.map(([name]) => name)]);
  for (const key of Object.keys(raw)) {
    if (!allowed.has(key)) return { ok: false, error: `${type}: unexpected field ${JSON.stringify(key.slice(0, 40))}`, ...replyTo(raw) };
  }
  for (const [name, kind] of fields) {
    if (!Object.prototype.hasOwnProperty.call(raw, name)) return { ok: false, error: `${type}: missing field ${name}`, ...replyTo(raw) };
    const problem = checkField(kind, raw[name]);
    if (problem) return { ok: false, error: `${type}: ${name} ${problem}`, ...replyTo(raw) };
  }
  // Every field was checked above; rebuild the message from them so nothing else rides along.
  const message: Record<string, string | number> = { type };
  for (const [name] of fields) message[name] = raw[name] as string | number;
  return { ok: true, message: message as unknown as PageMessage };
}

function replyTo(raw: Record<string, unknown>): { requestId?: string } {
  const id = raw.requestId;
  return checkField('requestId', id) === undefined ? { requestId: id as string } : {};
}
