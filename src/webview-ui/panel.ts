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
import type { HostMessage, PanelState } from '../shared/panelProtocol';
import { buildComposer, renderComposer } from './composer';
import { el } from './dom';
import { renderHolds } from './holds';
import { renderActivity, renderAgents, renderProcesses } from './lists';
import { errors, inFlight, keepOnly, rerender, save, saved, send, setRenderer, show, showErrorIn } from './pageState';
import { renderWorks } from './works';

let restoredScroll = false;

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
  showErrorIn(target.error, key);
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
    keepOnly(saved.editing, new Set(works.flatMap((w) => w.instructions.filter((i) => i.editable).map((i) => i.id))));
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
  keepOnly(saved.drafts, new Set(state.holds.map((h) => h.approvalId)));

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
  rerender();
}

setRenderer(render);

window.addEventListener('message', (event: MessageEvent<unknown>) => {
  const m = event.data as HostMessage | undefined;
  if (typeof m !== 'object' || m === null || typeof m.type !== 'string') return;
  switch (m.type) {
    case 'state':
      show(m.state);
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
