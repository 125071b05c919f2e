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
  readonly tool: 'apply_patch' | 'exec_command';
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

/** Everything the page shows. */
export interface PanelState {
  /** Pending holds (newest first), then stale ones (newest first). */
  readonly holds: readonly PanelHold[];
  /** Newest first. */
  readonly activity: readonly PanelActivity[];
  /** Running first, then exited; newest first within each. */
  readonly processes: readonly PanelProcess[];
  readonly pendingCount: number;
}

// ---------------------------------------------------------------------------------------------------------------
// Messages
// ---------------------------------------------------------------------------------------------------------------

/** Page → host. Every message but `ready` is a request and gets exactly one `reply` while the view lives. */
export type PageMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'approve'; readonly requestId: string; readonly approvalId: string }
  | { readonly type: 'deny'; readonly requestId: string; readonly approvalId: string; readonly note: string }
  | { readonly type: 'openReview'; readonly requestId: string; readonly approvalId: string }
  | { readonly type: 'openTerminal'; readonly requestId: string; readonly processId: string }
  | { readonly type: 'openPreview'; readonly requestId: string; readonly runId: string };

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

const REQUEST_ID = /^[A-Za-z0-9_.:-]+$/;

/** The fields each message type carries besides `type`, and how each is checked. */
const FIELDS: { readonly [K in PageMessageType]: readonly (readonly [string, 'id' | 'requestId' | 'note'])[] } = {
  ready: [],
  approve: [['requestId', 'requestId'], ['approvalId', 'id']],
  deny: [['requestId', 'requestId'], ['approvalId', 'id'], ['note', 'note']],
  openReview: [['requestId', 'requestId'], ['approvalId', 'id']],
  openTerminal: [['requestId', 'requestId'], ['processId', 'id']],
  openPreview: [['requestId', 'requestId'], ['runId', 'id']],
};

export type ParsedPageMessage =
  | { readonly ok: true; readonly message: PageMessage }
  /** `requestId` is set when the message carried a well-formed one, so the host can reply. */
  | { readonly ok: false; readonly error: string; readonly requestId?: string };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;
}

function checkField(kind: 'id' | 'requestId' | 'note', value: unknown): string | undefined {
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
  }
}

/**
 * Checks the shape and types of a message from the page: a known `type`, exactly the fields it carries, each a
 * string of bounded length. It does not check that the ids name anything: the host does that against the
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
  const message: Record<string, string> = { type };
  for (const [name] of fields) message[name] = raw[name] as string;
  return { ok: true, message: message as unknown as PageMessage };
}

function replyTo(raw: Record<string, unknown>): { requestId?: string } {
  const id = raw.requestId;
  return checkField('requestId', id) === undefined ? { requestId: id as string } : {};
}
