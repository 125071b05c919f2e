import type { ProcessStatus } from '../common/processTypes';

/** Longest command shown in a terminal's name (after the `CodeSpace: ` prefix). */
export const TERMINAL_NAME_CHARS = 40;

export const DIM = '\x1b[2m';
export const RESET = '\x1b[0m';
// CSI / SS3 sequences (arrow keys, function keys) that a pipe's line editor ignores.
// eslint-disable-next-line no-control-regex
export const KEY_SEQUENCE = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1bO[@-~]|\x1b./g;

/** `CodeSpace: <argv joined>`, the command shortened to about 40 characters. */
export function terminalName(command: readonly string[]): string {
  const text = command.join(' ').replace(/\s+/g, ' ').trim();
  const chars = [...text];
  const shown = chars.length > TERMINAL_NAME_CHARS ? chars.slice(0, TERMINAL_NAME_CHARS - 1).join('') + '…' : text;
  return `CodeSpace: ${shown}`;
}

/** The dim line printed when a process ends. */
export function exitLine(status: ProcessStatus): string {
  switch (status.termination) {
    case 'exited':
      return `[process exited with code ${status.exit_code ?? '?'}]`;
    case 'terminated':
      return '[terminated]';
    case 'timeout':
      return '[timed out]';
    default:
      return status.signal ? `[process ended by ${status.signal}]` : '[process ended]';
  }
}

/** Lone `\n` → `\r\n` (pipes have no terminal driver to do it). `afterCR`: the previous text ended in `\r`. */
export function toCrLf(text: string, afterCR: boolean): string {
  const converted = text.replace(/(?<!\r)\n/g, '\r\n');
  return afterCR && text.startsWith('\n') ? converted.slice(1) : converted;
}
