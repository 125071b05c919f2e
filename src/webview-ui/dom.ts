// Small DOM helpers of the panel page: every element is built through `el`, and every text from outside lands in a
// text node (never parsed as markup).
import { visiblePieces } from '../shared/visibleText';

export type Child = Node | string | undefined | false;

export function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: { className?: string; attrs?: Record<string, string>; text?: string } = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (props.className) e.className = props.className;
  if (props.attrs) for (const [k, v] of Object.entries(props.attrs)) e.setAttribute(k, v);
  if (props.text !== undefined) e.textContent = props.text;
  for (const c of children) if (c !== undefined && c !== false) e.append(c);
  return e;
}

export function time(iso: string | undefined): HTMLTimeElement | undefined {
  if (!iso) return undefined;
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return undefined;
  return el('time', { attrs: { datetime: iso, title: d.toLocaleString() }, text: d.toLocaleTimeString() });
}

export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  const h = Math.floor(m / 60);
  return `${h} h ${m - h * 60} min`;
}

/** Text from outside as exact text: acting characters become visible escapes (`.ctrl`), all in text nodes. */
export function exactText(className: string, text: string, attrs: Record<string, string> = {}): HTMLElement {
  const e = el('div', { className, attrs });
  for (const piece of visiblePieces(text)) e.append(piece.escaped ? el('span', { className: 'ctrl', attrs: { title: 'a control or invisible character, shown escaped' }, text: piece.text }) : piece.text);
  return e;
}
