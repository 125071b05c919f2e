// The panel's composer: a new instruction for an open work, queued or kept as a draft
// (`[data-role="composer"]`); its unsent text and chosen work survive a reload.
import type { PanelWork } from '../shared/panelProtocol';
import { el } from './dom';
import { busy, request, save, saved, showErrorIn, showLocalError } from './pageState';
import { textProblem } from './works';

export interface Composer {
  readonly root: HTMLElement;
  readonly select: HTMLSelectElement;
  readonly text: HTMLTextAreaElement;
  readonly queue: HTMLButtonElement;
  readonly draft: HTMLButtonElement;
  readonly error: HTMLElement;
  readonly hint: HTMLElement;
}

export function buildComposer(): Composer {
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

export function renderComposer(c: Composer, works: readonly PanelWork[]): void {
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
  showErrorIn(c.error, 'composer');
}
