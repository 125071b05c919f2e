// The panel's works (steering): one `.work[data-work-id]` article a work, with its delivery, its instructions
// (`.instruction[data-instruction-id]`, a draft editable in place) and Review work / Discard.
import type { PanelDelivery, PanelInstruction, PanelWork } from '../shared/panelProtocol';
import { MAX_INSTRUCTION_BYTES, utf8Bytes } from '../shared/panelProtocol';
import { el, exactText, time } from './dom';
import { busy, decorate, request, rerender, save, saved, showErrorIn, showLocalError } from './pageState';

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
      rerender();
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
      rerender();
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
    decorate(node, i.id, ':scope > [data-role="error"]');
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
  showErrorIn(err, `work:${w.id}`);
  root.append(err);
  review.disabled = busy(`work:${w.id}`);
  if (discard) discard.disabled = busy(`work:${w.id}`);
  return root;
}

export function textProblem(text: string): string | undefined {
  if (text.trim() === '') return 'Write an instruction first.';
  if (utf8Bytes(text) > MAX_INSTRUCTION_BYTES) return `An instruction is at most ${MAX_INSTRUCTION_BYTES / 1024} KiB (UTF-8); this one is ${utf8Bytes(text)} bytes.`;
  return undefined;
}

export function renderWorks(container: HTMLElement, works: readonly PanelWork[]): void {
  const reuse = new Map<string, HTMLElement>();
  container.querySelectorAll<HTMLElement>('.instruction[data-instruction-id]').forEach((n) => reuse.set(n.dataset.instructionId ?? '', n));
  const nodes: Node[] = works.map((w) => buildWork(w, reuse));
  container.replaceChildren(...nodes);
}
