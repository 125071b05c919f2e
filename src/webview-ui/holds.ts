// The panel's pending approvals: one `.hold[data-approval-id]` article a hold, with its files or command, the note
// for the agent and the decision buttons. An unchanged hold keeps its element (and the note being typed).
import type { PanelHold } from '../shared/panelProtocol';
import { el, time } from './dom';
import { decorate, request, save, saved } from './pageState';

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

export function renderHolds(container: HTMLElement, holds: readonly PanelHold[]): void {
  const existing = new Map<string, HTMLElement>();
  container.querySelectorAll<HTMLElement>(':scope > .hold').forEach((node) => existing.set(node.dataset.approvalId ?? '', node));
  const nodes: Node[] = [];
  for (const h of holds) {
    const old = existing.get(h.approvalId);
    const node = old && old.dataset.sig === holdSignature(h) ? old : buildHold(h);
    decorate(node, h.approvalId, '[data-role="error"]');
    nodes.push(node);
  }
  if (nodes.length === 0) nodes.push(el('p', { className: 'empty', text: 'No pending approvals. Requests that need your decision appear here.' }));
  container.replaceChildren(...nodes);
}
