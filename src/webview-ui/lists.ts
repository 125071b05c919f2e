// The panel's lists: the activity (with Open Preview and Rewind to Here), the agent processes and the agents.
import type { PageMessage, PanelActivity, PanelAgent, PanelProcess } from '../shared/panelProtocol';
import type { Child } from './dom';
import { duration, el, time } from './dom';
import { busy, request } from './pageState';

/** The items as one list, or the section's `.empty` text when there are none. */
function renderList<T>(container: HTMLElement, items: readonly T[], empty: string, className: string, item: (x: T) => HTMLElement): void {
  if (items.length === 0) {
    container.replaceChildren(el('p', { className: 'empty', text: empty }));
    return;
  }
  container.replaceChildren(el('ul', { className }, ...items.map(item)));
}

/** A button that sends one request: disabled while a request on `target` is in flight, refusals shown at `errorKey`. */
function requestButton(props: { className: string; attrs: Record<string, string>; text?: string }, call: { target: string; errorKey: string; action: string; build: (requestId: string) => PageMessage }, ...children: Child[]): HTMLButtonElement {
  const b = el('button', { ...props, attrs: { type: 'button', ...props.attrs } }, ...children);
  b.disabled = busy(call.target);
  b.addEventListener('click', () => request(call.target, call.errorKey, call.action, call.build));
  return b;
}

export function renderActivity(container: HTMLElement, items: readonly PanelActivity[]): void {
  renderList(container, items, 'No activity yet.', 'activity-list', (a) => {
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
      li.append(
        requestButton(
          { className: 'secondary small', attrs: { 'data-action': 'open-preview', 'data-run-id': runId }, text: 'Open Preview' },
          { target: `preview:${runId}`, errorKey: 'activity', action: 'openPreview', build: (requestId) => ({ type: 'openPreview', requestId, runId }) },
        ),
      );
    }
    const cp = a.checkpoint;
    if (cp !== undefined) {
      li.append(
        requestButton(
          { className: 'secondary small', attrs: { 'data-action': 'rewind-work', 'data-operation-id': cp.operationId, title: "Put the work's files back to how they were right after this operation (Redo Rewind undoes it)" }, text: 'Rewind to Here' },
          { target: `rewind:${cp.operationId}`, errorKey: 'activity', action: 'rewindWork', build: (requestId) => ({ type: 'rewindWork', requestId, workId: cp.workId, operationId: cp.operationId }) },
        ),
      );
    }
    return li;
  });
}

export function renderProcesses(container: HTMLElement, items: readonly PanelProcess[]): void {
  renderList(container, items, 'No agent processes yet.', 'process-list', (p) => {
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
    const b = requestButton(
      { className: `process process-${p.state}`, attrs: { 'data-process-id': p.processId, 'data-state': p.state, title: 'Show the terminal of this process' } },
      { target: `process:${p.processId}`, errorKey: 'processes', action: 'openTerminal', build: (requestId) => ({ type: 'openTerminal', requestId, processId: p.processId }) },
      el('code', { className: 'cmd', text: p.command ? p.command.join(' ') : p.processId }),
      el('span', { className: 'meta' }, facts.join(' · '), p.state === 'running' && p.startedAt ? ' · since ' : undefined, p.state === 'running' ? time(p.startedAt) : undefined),
    );
    return el('li', {}, b);
  });
}

/** The agents with a credential: name, sessions, when connected and last active, and Revoke. */
export function renderAgents(container: HTMLElement, items: readonly PanelAgent[]): void {
  renderList(container, items, 'No agent has a credential yet: Connect an Agent issues one.', 'agent-list', (a) => {
    const meta = el('span', { className: 'meta' });
    if (a.connectedAt === undefined) meta.append('not connected since this window started');
    else meta.append(`${a.sessions} session${a.sessions === 1 ? '' : 's'} · connected `, time(a.connectedAt) ?? '', ' · last activity ', time(a.lastActivity ?? a.connectedAt) ?? '');
    const revoke = requestButton(
      { className: 'revoke', text: 'Revoke', attrs: { 'data-action': 'revokeAgent', title: 'Close its sessions now; its credential stops working' } },
      { target: `agent:${a.id}`, errorKey: 'agents', action: 'revokeAgent', build: (requestId) => ({ type: 'revokeAgent', requestId, agentId: a.id }) },
    );
    return el('li', { className: 'agent', attrs: { 'data-agent-id': a.id } }, el('span', { className: 'name', text: a.name }), meta, revoke);
  });
}
