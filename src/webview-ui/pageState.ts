// What the panel page keeps between host messages: the state it renders, the requests in flight and their errors,
// and what survives a reload of the view (note drafts, composer text, draft edits, scroll position), through
// vscode.getState/setState.
import type { PageMessage, PanelState } from '../shared/panelProtocol';

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

/** What survives a reload of the page. */
export interface PageState {
  drafts: Record<string, string>;
  scrollY: number;
  /** The composer's unsent text and chosen work. */
  composer: { workId: string; text: string };
  /** Draft instructions being edited: their text so far, by instruction id. */
  editing: Record<string, string>;
}

/** A request in flight: `target` is what to mark busy, `errorKey` where a refusal is shown, `action` its type. */
export interface InFlight {
  readonly target: string;
  readonly errorKey: string;
  readonly action: string;
}

const vscode = acquireVsCodeApi();

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

export const saved = readSaved(vscode.getState());

/**
 * Requests in flight, by request id: `target` is what to mark busy (an approval id, `process:<id>`,
 * `preview:<run id>`), `errorKey` where a refusal is shown (the approval id, `processes`, `activity`).
 */
export const inFlight = new Map<string, InFlight>();
/** The error of the last failed request, by error key. */
export const errors = new Map<string, string>();

/** The last state the host sent, and the function that renders it (set once by the page's entry point). */
const view: { current?: PanelState; render?: (state: PanelState) => void } = {};

export function setRenderer(render: (state: PanelState) => void): void {
  view.render = render;
}

/** Takes the host's new state and renders it. */
export function show(state: PanelState): void {
  view.current = state;
  view.render?.(state);
}

/** Renders the last state again (after a local change: a request sent, an error, an edit begun). */
export function rerender(): void {
  if (view.current) view.render?.(view.current);
}

export function save(): void {
  vscode.setState(saved);
}

/** Drops the saved entries (note drafts, draft edits) whose item is no longer `live`, saving when any went. */
export function keepOnly(entries: Record<string, string>, live: ReadonlySet<string>): void {
  let dropped = false;
  for (const id of Object.keys(entries)) {
    if (!live.has(id)) {
      delete entries[id];
      dropped = true;
    }
  }
  if (dropped) save();
}

export function send(message: PageMessage): void {
  vscode.postMessage(message);
}

let requestCounter = 0;

/** Sends a request, marking `target` busy and clearing the error under `errorKey` until the host replies. */
export function request(target: string, errorKey: string, action: string, build: (requestId: string) => PageMessage): void {
  const requestId = `r${Date.now().toString(36)}-${++requestCounter}`;
  inFlight.set(requestId, { target, errorKey, action });
  errors.delete(errorKey);
  send(build(requestId));
  rerender();
}

export function busy(target: string): boolean {
  for (const r of inFlight.values()) if (r.target === target) return true;
  return false;
}

/** A refusal found by the page itself (before anything is sent), shown like the host's. */
export function showLocalError(key: string, message: string): void {
  errors.set(key, message);
  rerender();
}

/** Shows the last error under `key` in `node` (hidden when there is none). */
export function showErrorIn(node: HTMLElement, key: string): void {
  node.textContent = errors.get(key) ?? '';
  node.hidden = !errors.has(key);
}

/**
 * Busy buttons and the last error of one item (a hold, an instruction): applied to fresh and reused elements alike.
 * `errorSelector` finds the item's own error line.
 */
export function decorate(node: HTMLElement, id: string, errorSelector: string): void {
  const isBusy = busy(id);
  node.classList.toggle('busy', isBusy);
  node.querySelectorAll<HTMLButtonElement>('button[data-action]').forEach((b) => (b.disabled = isBusy));
  const err = node.querySelector<HTMLElement>(errorSelector);
  if (err) showErrorIn(err, id);
}
