// The CodeSpace panel page: plain DOM, no framework. It renders the host's state message (the whole view model)
// and posts requests; it keeps only note drafts and the scroll position (vscode.getState/setState), so a reload
// of the view loses nothing the host does not send again after `ready`.
//
// DOM hooks the end-to-end tests rely on: each hold is `.hold[data-approval-id]`, its buttons are
// `button[data-action="open-review"|"approve"|"request-changes"|"deny"]` and its note `textarea[data-role="note"]`; each process is
// `[data-process-id]`; an empty section shows a `.empty` text. The composer is `[data-role="composer"]`: its work
// `select[data-role="work-select"]`, its `textarea[data-role="instruction-text"]` and the buttons
// `button[data-action="queue-instruction"|"save-draft"]`; each work is `.work[data-work-id]` with
// `button[data-action="review-work"]`, each instruction `.instruction[data-instruction-id][data-status]` with its
// `.instruction-text`, `.instruction-note` and, for a draft, `button[data-action="edit-draft"|"delete-draft"|"queue-draft"]` (a blocked one:
// `button[data-action="requeue"]`).
import type { HostMessage, PageMessage, PanelActivity, PanelAgent, PanelDelivery, PanelHold, PanelInstruction, PanelProcess, PanelState, PanelWork } from '../shared/panelProtocol';
import { MAX_INSTRUCTION_BYTES, utf8Bytes } from '../shared/panelProtocol';
import { visiblePieces } from '../shared/visibleText';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What survives a reload of the page. */
interface PageState {
  drafts: Record<string, string>;
  scrollY: number;
  /** The composer's unsent text and chosen work. */
  composer: { workId: string; text: string };
  /** Draft instructions being edited: their text so far, by instruction id. */
  editing: Record<string, string>;
}

const vscode = acquireVsCodeApi();
const saved = readSaved(vscode.getState());
let current: PanelState | undefined;
let restoredScroll = false;

/**
 * Requests in flight, by request id: `target` is what to mark busy (an approval id, `process:<id>`,
 * `preview:<run id>`), `errorKey` where a refusal is shown (the approval id, `processes`, `activity`).
 */
const inFlight = new Map<string, { readonly target: string; readonly errorKey: string; readonly action: string }>();
/** The error of the last failed request, by error key. */
const errors = new Map<string, string>();

function readSaved(raw: unknown): PageState {
  const out: PageState = { drafts: {}, scrollY: 0, composer: { workId: '', text: '' }, editing: {} };
  if (typeof raw !== 'object' || raw === null) return out;
  const r = raw as { drafts?: unknown; scrollY?: unknown; composer?: unknown; editing?: unknown };
  if (typeof r.scrollY === 'number' && Number.isFinite(r.scrollY)) out.scrollY = r.scrollY;
  if (typeof r.drafts === 'object' && r.drafts !== null) {
    for (const [k, v] of Object.entries(r.drafts as Record<string, unknown>)) if (typeof v === 'string') out.drafts[k] = v;
  }
  if (typeof r.editing === 'object' && r.editing !== null) {
    for (const [k, v] of Object.entries(r.editing as Record<string, unknown>)) if (typeof v === 'string') out.editing[k] = v;
  }
  const c = r.composer as { workId?: unknown; text?: unknown } | undefined;
  if (typeof c === 'object' && c !== null) {
    if (typeof c.workId === 'string') out.composer.workId = c.workId;
    if (typeof c.text === 'string') out.composer.text = c.text;
  }
  return out;
}

function save(): void {
  vscode.setState(saved);
}

let requestCounter = 0;
function send(message: PageMessage): void {
  vscode.postMessage(message);
}

function request(target: string, errorKey: string, action: string, build: (requestId: string) => PageMessage): void {
  const requestId = `r${Date.now().toString(36)}-${++requestCounter}`;
  inFlight.set(requestId, { target, errorKey, action });
  errors.delete(errorKey);
  send(build(requestId));
  if (current) render(current);
}

function busy(target: string): boolean {
  for (const r of inFlight.values()) if (r.target === target) return true;
  return false;
}

// ---------------------------------------------------------------------------------------------------------------
// Small DOM helpers
// ---------------------------------------------------------------------------------------------------------------

type Child = Node | string | undefined | false;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: { className?: string; attrs?: Record<string, string>; text?: string } = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.className) e.className = props.className;
  if (props.attrs) for (const [k, v] of Object.entries(props.attrs)) e.setAttribute(k, v);
  if (props.text !== undefined) e.textContent = props.text;
  for (const c of children) if (c !== undefined && c !== false) e.append(c);
  return e;
}

function time(iso: string | undefined): HTMLTimeElement | undefined {
  if (!iso) return undefined;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return undefined;
  return el('time', { attrs: { datetime: iso, title: d.toLocaleString() }, text: d.toLocaleTimeString() });
}

function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m - h * 60} min`;
}

// ---------------------------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------------------------

function holdSignature(h: PanelHold): string {
  return JSON.stringify(h);
}

function renderFiles(h: PanelHold): HTMLElement | undefined {
  if (!h.files) return undefined;
  const list = el('ul', { className: 'files' });
  for (const f of h.files) {
    const path = f.kind === 'move' && f.moveTo !== undefined ? `${f.path} → ${f.moveTo}` : f.path;
    list.append(
      el(
        'li',
        { className: `file${f.sensitive ? ' sensitive' : ''}`, attrs: { 'data-path': f.path } },
        el('span', { className: `kind kind-${f.kind}`, text: f.kind }),
        el('span', { className: 'path', text: path }),
        el('span', { className: 'stat' }, el('span', { className: 'added', text: `+${f.added}` }), ' ', el('span', { className: 'removed', text: `\u2212${f.removed}` })),
        f.sensitive && el('span', { className: 'tag tag-sensitive', text: 'sensitive' }),
      ),
    );
  }
  return list;
}

function renderCommand(h: PanelHold): HTMLElement | undefined {
  const c = h.command;
  if (!c) return undefined;
  const argv = el('ol', { className: 'argv', attrs: { start: '0' } });
  for (const a of c.argv) argv.append(el('li', {}, a === '' ? el('span', { className: 'muted', text: '(empty string)' }) : el('code', { text: a })));
  const env = el('ul', { className: 'env' });
  for (const e of c.env) env.append(el('li', {}, el('code', { text: e.value === null ? `unset ${e.key}` : `${e.key}=${e.value}` })));
  return el(
    'dl',
    { className: 'command' },
    el('dt', { text: 'Command' }),
    el('dd', {}, argv),
    el('dt', { text: 'Working directory' }),
    el('dd', {}, el('code', { text: c.cwd === '' ? '.' : c.cwd }), c.cwd === '' ? ' (workspace root)' : undefined),
    el('dt', { text: 'Environment' }),
    el('dd', {}, c.env.length === 0 ? el('span', { className: 'muted', text: 'no changes' }) : env),
    el('dt', { text: 'Terminal' }),
    el('dd', { text: c.tty ? 'tty (pseudo-terminal)' : 'pipes (no tty)' }),
    el('dt', { text: 'Occupancy' }),
    el('dd', { text: c.occupancy }),
  );
}

function buildHold(h: PanelHold): HTMLElement {
  const root = el('article', {
    className: `hold hold-${h.state}${h.sensitivePaths.length > 0 ? ' hold-sensitive' : ''}`,
    attrs: { 'data-approval-id': h.approvalId, 'data-state': h.state, 'data-sig': holdSignature(h) },
  });
  root.append(
    el(
      'header',
      { className: 'hold-header' },
      el('span', { className: 'tag', text: h.tool }),
      h.state === 'stale' && el('span', { className: 'tag tag-stale', text: 'stale' }),
      el('span', { className: 'title', text: h.title }),
    ),
    el('p', { className: 'meta' }, `${h.workspaceId} · ${h.reason === 'confirm' ? 'every request is confirmed' : h.reason === 'sensitive' ? 'touches a sensitive path' : 'the agent asked for review'} · `, time(h.createdAt)),
  );
  if (h.state === 'stale') root.append(el('p', { className: 'banner banner-stale', attrs: { 'data-role': 'stale-reason' }, text: `Stale: ${h.staleReason ?? 'a bound file changed'}. It can no longer be approved.` }));
  if (h.sensitivePaths.length > 0) {
    root.append(el('p', { className: 'banner banner-sensitive', attrs: { 'data-role': 'sensitive' } }, 'Sensitive paths: ', ...h.sensitivePaths.flatMap((p, i) => [i > 0 ? ', ' : '', el('code', { text: p })])));
  }
  const files = renderFiles(h);
  if (files) root.append(files);
  const command = renderCommand(h);
  if (command) root.append(command);

  if (h.canDeny) {
    const note = el('textarea', { attrs: { 'data-role': 'note', rows: '2', placeholder: 'Note for the agent (sent with Deny)', 'aria-label': 'Note for the agent' } });
    note.value = saved.drafts[h.approvalId] ?? '';
    note.addEventListener('input', () => {
      if (note.value === '') delete saved.drafts[h.approvalId];
      else saved.drafts[h.approvalId] = note.value;
      save();
    });
    root.append(note);
  }
  const actions = el('div', { className: 'actions' });
  if (h.canReview) {
    const b = el('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'open-review' }, text: 'Open Review' });
    b.addEventListener('click', () => request(h.approvalId, h.approvalId, 'openReview', (requestId) => ({ type: 'openReview', requestId, approvalId: h.approvalId })));
    actions.append(b);
  }
  if (h.canApprove) {
    const b = el('button', { attrs: { type: 'button', 'data-action': 'approve' }, text: 'Approve' });
    b.addEventListener('click', () => request(h.approvalId, h.approvalId, 'approve', (requestId) => ({ type: 'approve', requestId, approvalId: h.approvalId })));
    actions.append(b);
  }
  if (h.canDeny && h.canReview) {
    const b = el('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'request-changes', title: 'Send the line comments written in the review (and the note) to the agent; nothing is written' }, text: 'Request Changes' });
    b.addEventListener('click', () => {
      const note = root.querySelector<HTMLTextAreaElement>('textarea[data-role="note"]')?.value ?? '';
      request(h.approvalId, h.approvalId, 'requestChanges', (requestId) => ({ type: 'requestChanges', requestId, approvalId: h.approvalId, note }));
    });
    actions.append(b);
  }
  if (h.canDeny) {
    const b = el('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'deny' }, text: 'Deny' });
    b.addEventListener('click', () => {
      const note = root.querySelector<HTMLTextAreaElement>('textarea[data-role="note"]')?.value ?? '';
      request(h.approvalId, h.approvalId, 'deny', (requestId) => ({ type: 'deny', requestId, approvalId: h.approvalId, note }));
    });
    actions.append(b);
  }
  root.append(actions, el('p', { className: 'error', attrs: { 'data-role': 'error', role: 'alert' } }));
  return root;
}

/** Busy buttons and the last error: applied to fresh and reused hold elements alike. */
function decorateHold(node: HTMLElement, id: string): void {
  const isBusy = busy(id);
  node.classList.toggle('busy', isBusy);
  node.querySelectorAll<HTMLButtonElement>('button[data-action]').forEach((b) => (b.disabled = isBusy));
  const err = node.querySelector<HTMLElement>('[data-role="error"]');
  if (err) {
    err.textContent = errors.get(id) ?? '';
    err.hidden = !errors.has(id);
  }
}

function renderHolds(container: HTMLElement, holds: readonly PanelHold[]): void {
  const existing = new Map<string, HTMLElement>();
  container.querySelectorAll<HTMLElement>(':scope > .hold').forEach((node) => existing.set(node.dataset.approvalId ?? '', node));
  const nodes: Node[] = [];
  for (const h of holds) {
    const old = existing.get(h.approvalId);
    const node = old && old.dataset.sig === holdSignature(h) ? old : buildHold(h);
    decorateHold(node, h.approvalId);
    nodes.push(node);
  }
  if (nodes.length === 0) nodes.push(el('p', { className: 'empty', text: 'No pending approvals. Requests that need your decision appear here.' }));
  container.replaceChildren(...nodes);
}

function renderActivity(container: HTMLElement, items: readonly PanelActivity[]): void {
  if (items.length === 0) {
    container.replaceChildren(el('p', { className: 'empty', text: 'No activity yet.' }));
    return;
  }
  const list = el('ul', { className: 'activity-list' });
  for (const a of items) {
    const li = el(
      'li',
      { className: `activity kind-${a.kind}`, attrs: { 'data-kind': a.kind, ...(a.runId ? { 'data-run-id': a.runId } : {}) } },
      el('span', { className: `tag tag-${a.kind}`, text: a.kind }),
      el('span', { className: 'title', text: a.title }),
      a.detail !== undefined && el('span', { className: 'detail', text: a.detail }),
      time(a.at),
    );
    const runId = a.previewRunId;
    if (runId !== undefined) {
      const b = el('button', { className: 'secondary small', attrs: { type: 'button', 'data-action': 'open-preview', 'data-run-id': runId }, text: 'Open Preview' });
      b.disabled = busy(`preview:${runId}`);
      b.addEventListener('click', () => request(`preview:${runId}`, 'activity', 'openPreview', (requestId) => ({ type: 'openPreview', requestId, runId })));
      li.append(b);
    }
    const cp = a.checkpoint;
    if (cp !== undefined) {
      const key = `rewind:${cp.operationId}`;
      const b = el('button', { className: 'secondary small', attrs: { type: 'button', 'data-action': 'rewind-work', 'data-operation-id': cp.operationId, title: "Put the work's files back to how they were right after this operation (Redo Rewind undoes it)" }, text: 'Rewind to Here' });
      b.disabled = busy(key);
      b.addEventListener('click', () => request(key, 'activity', 'rewindWork', (requestId) => ({ type: 'rewindWork', requestId, workId: cp.workId, operationId: cp.operationId })));
      li.append(b);
    }
    list.append(li);
  }
  container.replaceChildren(list);
}

function renderProcesses(container: HTMLElement, items: readonly PanelProcess[]): void {
  if (items.length === 0) {
    container.replaceChildren(el('p', { className: 'empty', text: 'No agent processes yet.' }));
    return;
  }
  const list = el('ul', { className: 'process-list' });
  for (const p of items) {
    const facts: string[] = [];
    if (p.state === 'running') facts.push('running');
    else {
      facts.push(p.termination ?? 'exited');
      if (p.exitCode !== undefined) facts.push(`exit code ${p.exitCode}`);
      if (p.signal !== undefined) facts.push(`signal ${p.signal}`);
      if (p.durationMs !== undefined) facts.push(duration(p.durationMs));
    }
    if (p.tty) facts.push('tty');
    facts.push(p.workspaceId);
    const b = el(
      'button',
      { className: `process process-${p.state}`, attrs: { type: 'button', 'data-process-id': p.processId, 'data-state': p.state, title: 'Show the terminal of this process' } },
      el('code', { className: 'cmd', text: p.command ? p.command.join(' ') : p.processId }),
      el('span', { className: 'meta' }, facts.join(' · '), p.state === 'running' && p.startedAt ? ' · since ' : undefined, p.state === 'running' ? time(p.startedAt) : undefined),
    );
    b.disabled = busy(`process:${p.processId}`);
    b.addEventListener('click', () => request(`process:${p.processId}`, 'processes', 'openTerminal', (requestId) => ({ type: 'openTerminal', requestId, processId: p.processId })));
    list.append(el('li', {}, b));
  }
  container.replaceChildren(list);
}

/** The agents with a credential: name, sessions, when connected and last active, and Revoke. */
function renderAgents(container: HTMLElement, items: readonly PanelAgent[]): void {
  if (items.length === 0) {
    container.replaceChildren(el('p', { className: 'empty', text: 'No agent has a credential yet: Connect an Agent issues one.' }));
    return;
  }
  const list = el('ul', { className: 'agent-list' });
  for (const a of items) {
    const meta = el('span', { className: 'meta' });
    if (a.connectedAt === undefined) meta.append('not connected since this window started');
    else meta.append(`${a.sessions} session${a.sessions === 1 ? '' : 's'} · connected `, time(a.connectedAt) ?? '', ' · last activity ', time(a.lastActivity ?? a.connectedAt) ?? '');
    const revoke = el('button', { className: 'revoke', text: 'Revoke', attrs: { type: 'button', 'data-action': 'revokeAgent', title: 'Close its sessions now; its credential stops working' } });
    revoke.disabled = busy(`agent:${a.id}`);
    revoke.addEventListener('click', () => request(`agent:${a.id}`, 'agents', 'revokeAgent', (requestId) => ({ type: 'revokeAgent', requestId, agentId: a.id })));
    list.append(el('li', { className: 'agent', attrs: { 'data-agent-id': a.id } }, el('span', { className: 'name', text: a.name }), meta, revoke));
  }
  container.replaceChildren(list);
}

// ---------------------------------------------------------------------------------------------------------------
// Steering: the composer and the works
// ---------------------------------------------------------------------------------------------------------------

/** Text from outside as exact text: acting characters become visible escapes (`.ctrl`), all in text nodes. */
function exactText(className: string, text: string, attrs: Record<string, string> = {}): HTMLElement {
  const e = el('div', { className, attrs });
  for (const piece of visiblePieces(text)) e.append(piece.escaped ? el('span', { className: 'ctrl', attrs: { title: 'a control or invisible character, shown escaped' }, text: piece.text }) : piece.text);
  return e;
}

const STATUS_TEXT: Record<PanelInstruction['status'], string> = { draft: 'draft', queued: 'queued', claimed: 'claimed', done: 'done', blocked: 'blocked' };

function instructionSignature(i: PanelInstruction): string {
  return JSON.stringify([i, saved.editing[i.id] !== undefined]);
}

function buildInstruction(i: PanelInstruction): HTMLElement {
  const root = el('li', { className: `instruction status-${i.status}`, attrs: { 'data-instruction-id': i.id, 'data-status': i.status, 'data-sig': instructionSignature(i) } });
  const when = i.completedAt ?? i.claimedAt ?? i.queuedAt ?? i.createdAt;
  root.append(el('div', { className: 'instruction-header' }, el('span', { className: `tag tag-${i.status}`, attrs: { 'data-role': 'status' }, text: STATUS_TEXT[i.status] }), ' ', time(when)));
  const editing = saved.editing[i.id];
  if (i.editable && editing !== undefined) {
    const box = el('textarea', { attrs: { 'data-role': 'edit-text', rows: '3', 'aria-label': 'Edit the draft instruction' } });
    box.value = editing;
    box.addEventListener('input', () => {
      saved.editing[i.id] = box.value;
      save();
    });
    const saveButton = el('button', { attrs: { type: 'button', 'data-action': 'save-edit' }, text: 'Save' });
    saveButton.addEventListener('click', () => {
      const text = box.value;
      const problem = textProblem(text);
      if (problem) return showLocalError(i.id, problem);
      request(i.id, i.id, 'editDraft', (requestId) => ({ type: 'editDraft', requestId, instructionId: i.id, text, revision: i.revision }));
    });
    const cancel = el('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'cancel-edit' }, text: 'Cancel' });
    cancel.addEventListener('click', () => {
      delete saved.editing[i.id];
      save();
      if (current) render(current);
    });
    root.append(box, el('div', { className: 'actions' }, saveButton, cancel));
  } else {
    root.append(exactText('instruction-text', i.text));
  }
  if (i.note !== undefined) root.append(exactText(`instruction-note note-${i.status}`, i.note, { 'data-role': 'note-text' }));
  if (i.editable && editing === undefined) {
    const edit = el('button', { className: 'secondary small', attrs: { type: 'button', 'data-action': 'edit-draft' }, text: 'Edit' });
    edit.addEventListener('click', () => {
      saved.editing[i.id] = i.text;
      save();
      if (current) render(current);
    });
    const del = el('button', { className: 'secondary small', attrs: { type: 'button', 'data-action': 'delete-draft' }, text: 'Delete' });
    del.addEventListener('click', () => request(i.id, i.id, 'deleteDraft', (requestId) => ({ type: 'deleteDraft', requestId, instructionId: i.id })));
    const queue = el('button', { className: 'small', attrs: { type: 'button', 'data-action': 'queue-draft' }, text: 'Queue' });
    queue.addEventListener('click', () => request(i.id, i.id, 'queueDraft', (requestId) => ({ type: 'queueDraft', requestId, instructionId: i.id })));
    root.append(el('div', { className: 'actions' }, queue, edit, del));
  }
  if (i.requeueable) {
    const again = el('button', { className: 'secondary small', attrs: { type: 'button', 'data-action': 'requeue', title: 'Put it back in the queue for the agent' }, text: 'Requeue' });
    again.addEventListener('click', () => request(i.id, i.id, 'requeueInstruction', (requestId) => ({ type: 'requeueInstruction', requestId, instructionId: i.id })));
    root.append(el('div', { className: 'actions' }, again));
  }
  root.append(el('p', { className: 'error', attrs: { 'data-role': 'error', role: 'alert' } }));
  return root;
}

function countsLine(w: PanelWork): string {
  const c = w.counts;
  const parts = [c.queued && `${c.queued} queued`, c.claimed && `${c.claimed} claimed`, c.done && `${c.done} done`, c.blocked && `${c.blocked} blocked`, c.draft && `${c.draft} draft${c.draft === 1 ? '' : 's'}`].filter(Boolean);
  return parts.length > 0 ? parts.join(' · ') : 'no instructions';
}

const DELIVERY_TITLES: Record<PanelDelivery['state'], string> = {
  frozen: 'Frozen for review at this checkpoint: edits are refused until it is reopened',
  approved: 'The checkpoint was approved: its reviewed commit can be made',
  rejected: 'The checkpoint was rejected: reopen the work to go on',
  committed: 'The reviewed content was committed on the task branch',
  delivered: 'The reviewed commit was pushed as a task branch',
};

/** A work's review and delivery: its state, the checkpoint, and the pull request (or compare page) of each repository. */
function deliveryLine(d: PanelDelivery): HTMLElement {
  const root = el('div', { className: 'meta work-delivery', attrs: { 'data-role': 'work-delivery', 'data-state': d.state } });
  const line = el('p', { attrs: { title: DELIVERY_TITLES[d.state] } }, el('span', { className: `tag tag-delivery-${d.state}`, text: d.state }));
  if (d.digest !== undefined) line.append(' · ', el('code', { className: 'digest', attrs: { title: 'Checkpoint digest (sha256, shortened)' }, text: d.digest }));
  root.append(line);
  if (d.links !== undefined && d.links.length > 0) {
    const list = el('ul', { className: 'delivery-links' });
    for (const link of d.links) {
      const label = link.kind === 'pull_request' ? 'pull request' : 'compare';
      list.append(el('li', {}, `${link.workspaceId} · ${label} `, el('a', { attrs: { href: link.url, 'data-role': 'delivery-link', 'data-kind': link.kind, title: `The ${label} of ${link.branch}` }, text: link.url })));
    }
    root.append(list);
  }
  return root;
}

function buildWork(w: PanelWork, reuse: Map<string, HTMLElement>): HTMLElement {
  const root = el('article', { className: `work work-${w.status}`, attrs: { 'data-work-id': w.id, 'data-status': w.status } });
  root.append(
    el('header', { className: 'work-header' }, el('span', { className: `tag tag-work-${w.status}`, text: w.status }), exactText('title', w.title)),
    el('p', { className: 'meta' }, `${w.workspaceId} · ${countsLine(w)} · opened `, time(w.openedAt)),
  );
  // A work in its own worktrees: on which branch, away from the folders.
  if (w.branch !== undefined) root.append(el('p', { className: 'meta work-branch', attrs: { 'data-role': 'work-branch', title: 'Edits its own git worktree on this branch, not the workspace folders' } }, 'worktree · ', el('code', { className: 'branch', text: w.branch })));
  if (w.delivery !== undefined) root.append(deliveryLine(w.delivery));
  const list = el('ol', { className: 'instruction-list' });
  for (const i of w.instructions) {
    const old = reuse.get(i.id);
    const node = old && old.dataset.sig === instructionSignature(i) ? old : buildInstruction(i);
    decorateItem(node, i.id);
    list.append(node);
  }
  if (w.instructions.length > 0) root.append(list);
  const review = el('button', { className: w.status === 'finished' ? '' : 'secondary', attrs: { type: 'button', 'data-action': 'review-work', title: w.baseline === 'git' ? 'Open every change since work_open as one diff' : 'Not a git folder: only the files patched under this work can be shown' }, text: 'Review work' });
  review.addEventListener('click', () => request(`work:${w.id}`, `work:${w.id}`, 'reviewWork', (requestId) => ({ type: 'reviewWork', requestId, workId: w.id })));
  let discard: HTMLButtonElement | undefined;
  if (w.holdsWorktree === true) {
    discard = el('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'discard-work', title: 'Remove its worktrees and their uncommitted files (asks first); a branch with unpushed commits is kept' }, text: 'Discard…' });
    discard.addEventListener('click', () => request(`work:${w.id}`, `work:${w.id}`, 'discardWork', (requestId) => ({ type: 'discardWork', requestId, workId: w.id })));
  }
  root.append(el('div', { className: 'actions' }, review, discard, w.status === 'finished' ? el('span', { className: 'muted', text: 'finished: review and commit it' }) : undefined));
  const err = el('p', { className: 'error', attrs: { 'data-role': 'error', role: 'alert' } });
  err.textContent = errors.get(`work:${w.id}`) ?? '';
  err.hidden = !errors.has(`work:${w.id}`);
  root.append(err);
  review.disabled = busy(`work:${w.id}`);
  if (discard) discard.disabled = busy(`work:${w.id}`);
  return root;
}

/** Busy buttons and the last error of one instruction. */
function decorateItem(node: HTMLElement, id: string): void {
  const isBusy = busy(id);
  node.classList.toggle('busy', isBusy);
  node.querySelectorAll<HTMLButtonElement>('button[data-action]').forEach((b) => (b.disabled = isBusy));
  const err = node.querySelector<HTMLElement>(':scope > [data-role="error"]');
  if (err) {
    err.textContent = errors.get(id) ?? '';
    err.hidden = !errors.has(id);
  }
}

function textProblem(text: string): string | undefined {
  if (text.trim() === '') return 'Write an instruction first.';
  if (utf8Bytes(text) > MAX_INSTRUCTION_BYTES) return `An instruction is at most ${MAX_INSTRUCTION_BYTES / 1024} KiB (UTF-8); this one is ${utf8Bytes(text)} bytes.`;
  return undefined;
}

function showLocalError(key: string, message: string): void {
  errors.set(key, message);
  if (current) render(current);
}

interface Composer {
  readonly root: HTMLElement;
  readonly select: HTMLSelectElement;
  readonly text: HTMLTextAreaElement;
  readonly queue: HTMLButtonElement;
  readonly draft: HTMLButtonElement;
  readonly error: HTMLElement;
  readonly hint: HTMLElement;
}

function buildComposer(): Composer {
  const select = el('select', { attrs: { 'data-role': 'work-select', 'aria-label': 'The work the instruction is for' } });
  const text = el('textarea', { attrs: { 'data-role': 'instruction-text', rows: '4', placeholder: 'An instruction for the agent (several lines are fine). It reaches the agent as data: it cannot approve, change settings or widen permissions.', 'aria-label': 'Instruction for the agent' } });
  text.value = saved.composer.text;
  text.addEventListener('input', () => {
    saved.composer.text = text.value;
    save();
  });
  select.addEventListener('change', () => {
    saved.composer.workId = select.value;
    save();
  });
  const queue = el('button', { attrs: { type: 'button', 'data-action': 'queue-instruction', title: 'Queue it: the agent sees it on its next tool call' }, text: 'Queue' });
  const draft = el('button', { className: 'secondary', attrs: { type: 'button', 'data-action': 'save-draft', title: 'Keep it as a draft to edit or queue later' }, text: 'Save draft' });
  const error = el('p', { className: 'error', attrs: { 'data-role': 'composer-error', role: 'alert' } });
  error.hidden = true;
  const hint = el('p', { className: 'empty', attrs: { 'data-role': 'composer-hint' } });
  const send = (kind: 'queueInstruction' | 'saveDraft'): void => {
    const workId = select.value;
    const body = text.value;
    if (!workId) return showLocalError('composer', 'No open work to send it to.');
    const problem = textProblem(body);
    if (problem) return showLocalError('composer', problem);
    request('composer', 'composer', kind, (requestId) => ({ type: kind, requestId, workId, text: body }));
  };
  queue.addEventListener('click', () => send('queueInstruction'));
  draft.addEventListener('click', () => send('saveDraft'));
  const root = el('div', { className: 'composer', attrs: { 'data-role': 'composer' } }, el('label', { className: 'meta', text: 'Work ' }, select), text, el('div', { className: 'actions' }, queue, draft), error);
  return { root, select, text, queue, draft, error, hint };
}

function renderComposer(c: Composer, works: readonly PanelWork[]): void {
  const open = works.filter((w) => w.status === 'open');
  const wanted = open.some((w) => w.id === saved.composer.workId) ? saved.composer.workId : (open[0]?.id ?? '');
  const sig = JSON.stringify(open.map((w) => [w.id, w.title]));
  if (c.select.dataset.sig !== sig) {
    c.select.replaceChildren(...open.map((w) => el('option', { attrs: { value: w.id }, text: `${w.title} (${w.workspaceId})` })));
    c.select.dataset.sig = sig;
  }
  c.select.value = wanted;
  const none = open.length === 0;
  c.root.hidden = none;
  c.hint.hidden = !none;
  c.hint.textContent = none ? 'No open work. When an agent opens one (work_open), write instructions for it here.' : '';
  const isBusy = busy('composer');
  c.queue.disabled = isBusy || none;
  c.draft.disabled = isBusy || none;
  c.error.textContent = errors.get('composer') ?? '';
  c.error.hidden = !errors.has('composer');
}

function renderWorks(container: HTMLElement, works: readonly PanelWork[]): void {
  const reuse = new Map<string, HTMLElement>();
  container.querySelectorAll<HTMLElement>('.instruction[data-instruction-id]').forEach((n) => reuse.set(n.dataset.instructionId ?? '', n));
  const nodes: Node[] = works.map((w) => buildWork(w, reuse));
  container.replaceChildren(...nodes);
}

// ---------------------------------------------------------------------------------------------------------------
// The page
// ---------------------------------------------------------------------------------------------------------------

function section(name: string, title: string): { section: HTMLElement; body: HTMLElement; count: HTMLElement; error: HTMLElement } {
  const count = el('span', { className: 'count' });
  const body = el('div', { className: 'section-body', attrs: { 'data-role': `${name}-list` } });
  const error = el('p', { className: 'error', attrs: { 'data-role': `${name}-error`, role: 'alert' } });
  error.hidden = true;
  const s = el('section', { className: `section section-${name}`, attrs: { 'data-section': name } }, el('h2', {}, title, ' ', count), error, body);
  return { section: s, body, count, error };
}

const root = document.getElementById('root') as HTMLElement;
const holdsSection = section('holds', 'Pending approvals');
const activitySection = section('activity', 'Activity');
const processSection = section('processes', 'Agent processes');
const agentSection = section('agents', 'Agents');
const steeringSection = section('steering', 'Steering');
const composer = buildComposer();
const worksBody = el('div', { attrs: { 'data-role': 'works-list' } });
steeringSection.body.append(composer.hint, composer.root, worksBody);

function showError(target: { error: HTMLElement }, key: string): void {
  target.error.textContent = errors.get(key) ?? '';
  target.error.hidden = !errors.has(key);
}

function render(state: PanelState): void {
  // Keep the focus (and caret) of a note being typed across a re-render.
  const active = document.activeElement;
  const caret = active instanceof HTMLTextAreaElement ? [active.selectionStart, active.selectionEnd] as const : undefined;

  if (!root.contains(holdsSection.section)) root.replaceChildren(holdsSection.section, steeringSection.section, activitySection.section, processSection.section, agentSection.section);
  const works = state.works;
  steeringSection.section.hidden = works === undefined;
  if (works) {
    renderComposer(composer, works);
    renderWorks(worksBody, works);
    const open = state.openWorkCount ?? 0;
    const waiting = state.waitingInstructionCount ?? 0;
    steeringSection.count.textContent = open > 0 ? `(${open} open${waiting > 0 ? ` · ${waiting} waiting` : ''})` : '';
    // Edits of drafts that are gone or no longer drafts are dropped.
    const drafts = new Set(works.flatMap((w) => w.instructions.filter((i) => i.editable).map((i) => i.id)));
    let dropped = false;
    for (const id of Object.keys(saved.editing)) {
      if (!drafts.has(id)) {
        delete saved.editing[id];
        dropped = true;
      }
    }
    if (dropped) save();
  }
  renderHolds(holdsSection.body, state.holds);
  holdsSection.count.textContent = state.pendingCount > 0 ? `(${state.pendingCount})` : '';
  renderActivity(activitySection.body, state.activity);
  showError(activitySection, 'activity');
  renderProcesses(processSection.body, state.processes);
  processSection.count.textContent = state.processes.length > 0 ? `(${state.processes.length})` : '';
  showError(processSection, 'processes');
  agentSection.section.hidden = state.agents === undefined;
  if (state.agents) {
    renderAgents(agentSection.body, state.agents);
    agentSection.count.textContent = state.agents.length > 0 ? `(${state.agents.length})` : '';
    showError(agentSection, 'agents');
  }

  if (active instanceof HTMLElement && active !== document.activeElement && active.isConnected) {
    active.focus();
    if (caret && active instanceof HTMLTextAreaElement) active.setSelectionRange(caret[0], caret[1]);
  }

  // Drafts of holds that are gone are dropped.
  const live = new Set(state.holds.map((h) => h.approvalId));
  let changed = false;
  for (const id of Object.keys(saved.drafts)) {
    if (!live.has(id)) {
      delete saved.drafts[id];
      changed = true;
    }
  }
  if (changed) save();

  if (!restoredScroll) {
    restoredScroll = true;
    window.scrollTo(0, saved.scrollY);
  }
}

function onReply(m: Extract<HostMessage, { type: 'reply' }>): void {
  const r = inFlight.get(m.requestId);
  if (!r) return;
  inFlight.delete(m.requestId);
  const key = r.errorKey;
  if (m.ok) {
    errors.delete(key);
    if (r.action === 'deny' || r.action === 'approve' || r.action === 'requestChanges') {
      delete saved.drafts[r.target];
      save();
    }
    if (r.action === 'queueInstruction' || r.action === 'saveDraft') {
      saved.composer.text = '';
      composer.text.value = '';
      save();
    }
    if (r.action === 'editDraft') {
      delete saved.editing[r.target];
      save();
    }
  } else {
    errors.set(key, m.error ?? `${r.action} failed`);
  }
  if (current) render(current);
}

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const m = event.data as HostMessage | undefined;
  if (typeof m !== 'object' || m === null || typeof m.type !== 'string') return;
  switch (m.type) {
    case 'state':
      current = m.state;
      render(m.state);
      break;
    case 'reply':
      onReply(m);
      break;
  }
});

let scrollQueued = false;
window.addEventListener('scroll', () => {
  if (scrollQueued) return;
  scrollQueued = true;
  requestAnimationFrame(() => {
    scrollQueued = false;
    saved.scrollY = window.scrollY;
    save();
  });
});

send({ type: 'ready' });
