import * as vscode from 'vscode';
import type { Disposable } from '../base/disposable';
import { InvalidArgumentsError, ToolError } from '../core/errors';
import type { Logger } from '../core/ports/logger';
import type { ProcessInfo, ProcessStatus, ProcessSupervisor } from '../core/process/supervisor';
import { TerminalFeed } from '../core/process/terminalFeed';
import { MAX_TERMINAL_DIMENSION } from '../core/process/supervisor';
import { settings } from './settings';
import type { SlotHolder } from './terminalSlots';
import { terminalSlots } from './terminalSlots';
import { describeError } from '../base/describeError';

/** What the mirror needs of the supervisor (structural, so tests can pass a fake). */
export type MirroredProcesses = Pick<
  ProcessSupervisor,
  'onDidStart' | 'onDidOutput' | 'onDidSkip' | 'onDidExit' | 'write' | 'resize' | 'terminate' | 'retainedOutput' | 'outputStats' | 'info' | 'status' | 'list'
>;

/** Longest command shown in a terminal's name (after the `CodeSpace: ` prefix). */
export const TERMINAL_NAME_CHARS = 40;
/**
 * Most output bytes decoded and handed to the terminal in one write. Small enough that the write's text, and the
 * extension host's JSON of the message carrying it to the workbench (an escape sequence grows up to sixfold there),
 * stay below V8's large-object size (128 KiB): such strings die young, where larger ones would each go to the old
 * generation and stay until a full collection (a flood grew the extension host by hundreds of MiB that way).
 */
const FLUSH_BYTES = 16 * 1024;
/**
 * Output bytes waiting for the terminal (as bytes: decoded only when written). Beyond this the oldest waiting
 * output is dropped for the newest (with a "[… N bytes not shown …]" line) rather than queued: the extension
 * host's memory stays flat, the terminal shows the end of a flood, and read_process still has the output. Above the
 * retained output (256 KiB by default), so a reload's replay fits with room for what follows it.
 */
const MAX_PENDING_BYTES = 512 * 1024;
/**
 * The mirror's pace while a process writes faster than its terminal is given output: one write a second, instead of
 * a batch at every turn of the barrier (about 25 a second). The first such write shows up to eight batches (128 KiB),
 * so a burst of up to 144 KiB shows whole; while older output keeps being dropped (a flood), each write shows the
 * newest batch (16 KiB) and marks the rest as not shown. Each write the terminal takes is a frame the workbench
 * draws, and in a window that draws in software (no GPU) a frame costs tens of ms of CPU, more the more text it
 * parses: at four writes a second of 128 KiB the window took about 400 ms of CPU a second on the two cores that a
 * 200 MiB flood also needed (docs/BENCHMARKS.md). Output that the terminal keeps up with is written as before.
 */
const FLOOD_PACE = { delayMs: 1000, batches: 8 } as const;

/**
 * Resolves once the workbench has processed what was written to a terminal before it. Extension terminals have
 * no flow control of their own (a Pseudoterminal's writes are never acknowledged), so each write waits for a
 * round trip to the workbench: what the renderer has not taken yet stays bounded in our queue instead of piling
 * up in the extension host's connection to it. The extension host holds terminal data back for 5 ms to batch it,
 * so the request goes out after that, behind the data. Any command the workbench (not the extension host)
 * answers would do: setting a context key of ours that nothing reads is the cheapest.
 */
async function workbenchBarrier(): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, TERMINAL_BATCH_DELAY_MS));
  // Bounded: a workbench that never answers (a closed or stalled window) must not stop the mirror for good; the
  // terminal then goes on at one batch per BARRIER_TIMEOUT_MS.
  let timer: ReturnType<typeof setTimeout> | undefined;
  await Promise.race([
    vscode.commands.executeCommand('setContext', 'codespace.terminalMirrorSync', true),
    new Promise((resolve) => (timer = setTimeout(resolve, BARRIER_TIMEOUT_MS))),
  ]);
  clearTimeout(timer);
}

/** Longest wait for the workbench's answer before the next batch goes anyway. */
const BARRIER_TIMEOUT_MS = 1000;

/** Longer than the extension host's own batching of terminal data (5 ms). */
const TERMINAL_BATCH_DELAY_MS = 10;

const DIM = '\x1b[2m';
const RESET = '\x1b[0m';
// CSI / SS3 sequences (arrow keys, function keys) that a pipe's line editor ignores.
// eslint-disable-next-line no-control-regex
const KEY_SEQUENCE = /\x1b\[[0-9;?]*[ -/]*[@-~]|\x1bO[@-~]|\x1b./g;

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

function clampDimension(n: number): number {
  return Math.min(MAX_TERMINAL_DIMENSION, Math.max(1, Math.floor(n)));
}

/** One process shown in one terminal: replay, live output, input, resize, close, exit line. */
class ProcessPty implements vscode.Pseudoterminal {
  private readonly writeEmitter = new vscode.EventEmitter<string>();
  private readonly closeEmitter = new vscode.EventEmitter<void>();
  readonly onDidWrite = this.writeEmitter.event;
  readonly onDidClose = this.closeEmitter.event;

  private opened = false;
  private closed = false;
  /** Set when CodeSpace itself closes the terminal: no terminate (shutdown ends the processes its own way). */
  private quiet = false;
  private status: ProcessStatus | undefined;
  private exitShown = false;
  private readonly feed: TerminalFeed;
  /** Pipes: the output shown last ended in `\r` (see toCrLf). */
  private afterCR = false;
  /** Pipes only: the line being typed (no terminal driver echoes or edits it). */
  private line = '';

  constructor(
    readonly info: ProcessInfo,
    private readonly processes: MirroredProcesses,
    private readonly logger: Logger,
    private readonly onClosed: (processId: string) => void,
    /** Why VS Code closed the terminal, once it has said (see close()). */
    private readonly exitReason: () => vscode.TerminalExitReason | undefined = () => undefined,
    /** Runs `decide` with the reason once VS Code reports the terminal closed (onDidCloseTerminal). */
    private readonly whenReasonKnown: (decide: (reason: vscode.TerminalExitReason | undefined) => void) => void = (decide) => decide(undefined),
  ) {
    this.feed = new TerminalFeed({
      maxPendingBytes: MAX_PENDING_BYTES,
      batchBytes: FLUSH_BYTES,
      write: (text) => this.writeEmitter.fire(text),
      ...(info.tty ? {} : { render: (text: string) => this.crlf(text) }),
      barrier: workbenchBarrier,
      flood: FLOOD_PACE,
    });
  }

  get exited(): boolean {
    return this.status !== undefined;
  }

  open(): void {
    if (this.opened || this.closed) return;
    this.opened = true;
    try {
      const stats = this.processes.outputStats(this.info.process_id);
      if (stats.retained_from > 0) this.note(`[${stats.retained_from} earlier byte(s) of output were not retained]`);
      const { bytes } = this.processes.retainedOutput(this.info.process_id);
      this.output(bytes);
    } catch (err) {
      // Forgotten already (PROCESS_NOT_FOUND): nothing to replay.
      this.logger.debug(`[terminals] ${this.info.process_id}: no output to replay: ${String(err)}`);
    }
    if (this.status) this.showExit();
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.feed.dispose();
    if (!this.status && !this.quiet) {
      // A terminal closed because the window goes away (a reload) is not the developer stopping the process: it
      // runs on in the process host and its terminal comes back. VS Code may call close() before it says why.
      const decide = (reason: vscode.TerminalExitReason | undefined): void => {
        if (reason === vscode.TerminalExitReason.Shutdown) {
          this.logger.info(`[terminals] terminal of ${this.info.process_id} closed with the window: the process runs on`);
          return;
        }
        this.logger.info(`[terminals] terminal of ${this.info.process_id} closed by the developer: terminating the process`);
        this.processes.terminate(this.info.process_id).catch((err: unknown) => this.ignoreGone(err, 'terminate'));
      };
      const reason = this.exitReason();
      if (reason === undefined) this.whenReasonKnown(decide);
      else decide(reason);
    }
    this.onClosed(this.info.process_id);
    this.writeEmitter.dispose();
    this.closeEmitter.dispose();
  }

  handleInput(data: string): void {
    if (this.closed || this.status) return;
    if (this.info.tty) {
      this.send(data);
      return;
    }
    // Pipes: a minimal line discipline, since no terminal driver echoes, edits or interrupts.
    for (const ch of data.replace(KEY_SEQUENCE, '')) {
      if (ch === '\r' || ch === '\n') {
        this.echo('\r\n');
        this.send(this.line + '\n');
        this.line = '';
      } else if (ch === '\x7f' || ch === '\b') {
        if (this.line !== '') {
          this.line = [...this.line].slice(0, -1).join('');
          this.echo('\b \b');
        }
      } else if (ch === '\x03') {
        this.echo('^C\r\n');
        this.line = '';
        this.processes.terminate(this.info.process_id).catch((err: unknown) => this.ignoreGone(err, 'terminate'));
      } else if (ch >= ' ' || ch === '\t') {
        this.line += ch;
        this.echo(ch);
      }
    }
  }

  setDimensions(dimensions: vscode.TerminalDimensions): void {
    if (!this.info.tty || this.status || this.closed) return;
    const rows = clampDimension(dimensions.rows);
    const cols = clampDimension(dimensions.columns);
    this.processes.resize(this.info.process_id, rows, cols).catch((err: unknown) => this.ignoreGone(err, 'resize'));
  }

  /**
   * Live output of the process. Before `open` the supervisor's buffer holds it; `open` replays that. The feed
   * copies what it keeps (the bytes may be a view of a buffer the connection reuses) and drops what does not fit.
   */
  output(bytes: Uint8Array): void {
    if (!this.opened || this.closed) return;
    this.feed.push(bytes);
  }

  /** Output that never reached this window (see ProcessSupervisor.onDidSkip): shown as the feed shows its own drops. */
  skipped(bytes: number): void {
    if (!this.opened || this.closed) return;
    this.feed.drop(bytes);
  }

  ended(status: ProcessStatus): void {
    this.status = status;
    if (this.opened && !this.closed) this.showExit();
  }

  /** Closes the terminal without ending the process (CodeSpace going away, the grace period after the exit, making room). */
  closeQuietly(terminal: vscode.Terminal): void {
    this.quiet = true;
    terminal.dispose();
  }

  private showExit(): void {
    if (this.exitShown || !this.status) return;
    this.exitShown = true;
    this.feed.end();
    this.note(exitLine(this.status));
  }

  private send(data: string): void {
    this.processes.write(this.info.process_id, data).catch((err: unknown) => this.ignoreGone(err, 'write'));
  }

  private ignoreGone(err: unknown, what: string): void {
    if (ToolError.is(err, 'PROCESS_EXITED') || ToolError.is(err, 'PROCESS_NOT_FOUND')) return;
    if (err instanceof InvalidArgumentsError) {
      // The agent ended the input of this pipe process (write_stdin eof): what is typed here goes nowhere.
      this.logger.debug(`[terminals] ${this.info.process_id}: ${what}: ${err.message}`);
      return;
    }
    this.logger.warn(`[terminals] ${this.info.process_id}: ${what} failed: ${describeError(err)}`);
  }

  /** A dim line of ours, on a line of its own. */
  private note(text: string): void {
    if (this.closed) return;
    this.feed.note((atLineStart) => `${RESET}${atLineStart ? '' : '\r\n'}${DIM}${text}${RESET}\r\n`);
  }

  private echo(text: string): void {
    if (this.closed || text === '') return;
    this.feed.note(text);
  }

  /** Pipes: what the terminal driver would do to output (toCrLf), in output order. */
  private crlf(text: string): string {
    if (text === '') return text;
    const shown = toCrLf(text, this.afterCR);
    this.afterCR = text.endsWith('\r');
    return shown;
  }
}

interface Mirror {
  readonly terminal: vscode.Terminal;
  readonly pty: ProcessPty;
  /** The developer asked for it (or asked to show it): it never closes on a timer. */
  requested: boolean;
  /** Order of its process's end among finished mirrors; undefined while the process runs. */
  finishedSeq?: number;
  /** Closes the terminal once the grace period after the exit has passed. */
  closeTimer?: ReturnType<typeof setTimeout>;
}

/** The two settings the mirror reads, each time it decides (so a change applies to the next decision). */
export interface TerminalSettings {
  maxLiveMirrors(): number;
  closeExitedAfterSeconds(): number;
}

const SETTINGS: TerminalSettings = {
  maxLiveMirrors: () => settings.terminalsMaxLiveMirrors(),
  closeExitedAfterSeconds: () => settings.terminalsCloseExitedAfterSeconds(),
};

/** Fired when a process's terminal opens or closes. */
export interface MirrorChange {
  readonly processId: string;
  readonly mirrored: boolean;
}

/**
 * Shows supervised processes in VS Code terminals, so the developer watches agents' commands live: the output so
 * far, then live output; typing goes to the process; closing the terminal ends a running process; resizing it
 * resizes a PTY. A finished process's terminal shows a dim status line and closes by itself after
 * `codespace.terminals.closeExitedAfterSeconds`. At most `codespace.terminals.maxLiveMirrors` agent terminals are
 * open: a process started while all are taken has none (it is still supervised and readable) until the developer
 * opens it with `show` (the Show Agent Process Terminal command). The full rule is in terminalSlots.ts. Terminals
 * CodeSpace opens on its own appear in the panel without taking focus.
 */
export class ProcessTerminals implements vscode.Disposable {
  private readonly mirrors = new Map<string, Mirror>();
  /** Terminals whose pseudoterminal closed before VS Code said why: the decision waits for onDidCloseTerminal. */
  private readonly closing = new Map<vscode.Terminal, (reason: vscode.TerminalExitReason | undefined) => void>();
  private readonly subscriptions: Disposable[] = [];
  private readonly didChangeMirrors = new vscode.EventEmitter<MirrorChange>();
  /** Fired when a process's terminal opens or closes. */
  readonly onDidChangeMirrors = this.didChangeMirrors.event;
  private finishedCount = 0;
  private disposed = false;

  constructor(
    private readonly processes: MirroredProcesses,
    private readonly logger: Logger,
    private readonly settings: TerminalSettings = SETTINGS,
  ) {
    this.subscriptions.push(
      processes.onDidStart((info) => this.started(info)),
      processes.onDidOutput((id, bytes) => this.mirrors.get(id)?.pty.output(bytes)),
      processes.onDidSkip((id, bytes) => this.mirrors.get(id)?.pty.skipped(bytes)),
      processes.onDidExit((id, status) => this.ended(id, status)),
      // A terminal closed before the workbench opened its pseudoterminal never gets a close() call: catch it here.
      vscode.window.onDidCloseTerminal((closed) => {
        const decide = this.closing.get(closed);
        this.closing.delete(closed);
        decide?.(closed.exitStatus?.reason);
        for (const { terminal, pty } of [...this.mirrors.values()]) if (terminal === closed) pty.close();
      }),
    );
    for (const status of processes.list()) {
      if (status.state === 'running') this.started(processes.info(status.process_id));
    }
  }

  /** Whether the process's terminal is open now. */
  mirrored(processId: string): boolean {
    return this.mirrors.has(processId);
  }

  /**
   * Opens the process's terminal if it has none (replaying the output kept so far, and how it ended if it has) and
   * shows it. Throws for a process the supervisor does not know (never ran, or forgotten since).
   */
  async show(processId: string): Promise<void> {
    if (this.disposed) throw new Error('CodeSpace: the agent terminals are shut down.');
    let mirror = this.mirrors.get(processId);
    if (!mirror) {
      let info: ProcessInfo;
      let status: ProcessStatus;
      try {
        info = this.processes.info(processId);
        status = this.processes.status(processId);
      } catch (err) {
        if (ToolError.is(err, 'PROCESS_NOT_FOUND')) {
          throw new Error(`CodeSpace: no agent process "${processId}" (it never ran in this window, or it has been forgotten).`);
        }
        throw err;
      }
      const { close } = terminalSlots.admitRequested(this.holders(), this.settings.maxLiveMirrors());
      for (const id of close) this.closeMirror(id, 'making room for a terminal the developer asked for');
      mirror = this.open(info, true);
      if (status.state === 'exited') this.markFinished(processId, mirror, status);
    } else if (!mirror.requested) {
      // Asked for: it no longer closes on a timer.
      mirror.requested = true;
      clearTimeout(mirror.closeTimer);
      mirror.closeTimer = undefined;
    }
    mirror.terminal.show(false);
  }

  dispose(): void {
    if (this.disposed) return;
    this.disposed = true;
    for (const sub of this.subscriptions.splice(0)) sub.dispose();
    for (const mirror of [...this.mirrors.values()]) {
      clearTimeout(mirror.closeTimer);
      try {
        mirror.pty.closeQuietly(mirror.terminal);
      } catch (err) {
        this.logger.warn(`[terminals] closing a terminal failed: ${String(err)}`);
      }
    }
    this.mirrors.clear();
    this.closing.clear();
    this.didChangeMirrors.dispose();
  }

  private holders(): SlotHolder[] {
    return [...this.mirrors].map(([processId, m]) => ({
      processId,
      requested: m.requested,
      ...(m.finishedSeq !== undefined ? { finishedSeq: m.finishedSeq } : {}),
    }));
  }

  /** A process started: it gets a terminal only if a slot is free now (see terminalSlots.ts). */
  private started(info: ProcessInfo): void {
    if (this.disposed || this.mirrors.has(info.process_id)) return;
    const slots = this.settings.maxLiveMirrors();
    const { open, close } = terminalSlots.admitNewProcess(this.holders(), slots);
    if (!open) {
      this.logger.debug(`[terminals] ${info.process_id}: no terminal (${this.mirrors.size} agent terminal(s) open, ${slots} allowed); Show Agent Process Terminal opens it`);
      return;
    }
    for (const id of close) this.closeMirror(id, 'making room for a new process');
    const mirror = this.open(info, false);
    mirror?.terminal.show(true); // visible in the panel, focus stays where the developer is typing
  }

  private open(info: ProcessInfo, requested: true): Mirror;
  private open(info: ProcessInfo, requested: false): Mirror | undefined;
  private open(info: ProcessInfo, requested: boolean): Mirror | undefined {
    try {
      const created: { terminal?: vscode.Terminal } = {};
      const pty: ProcessPty = new ProcessPty(
        info,
        this.processes,
        this.logger,
        (id) => this.forget(id, pty),
        () => created.terminal?.exitStatus?.reason,
        (decide) => {
          if (created.terminal) this.closing.set(created.terminal, decide);
          else decide(undefined);
        },
      );
      const terminal = vscode.window.createTerminal({
        name: terminalName(info.command),
        pty,
        iconPath: new vscode.ThemeIcon('robot'),
        isTransient: true,
        location: vscode.TerminalLocation.Panel,
      });
      created.terminal = terminal;
      const mirror: Mirror = { terminal, pty, requested };
      this.mirrors.set(info.process_id, mirror);
      this.logger.debug(`[terminals] ${info.process_id} shown in terminal "${terminal.name}"${requested ? ' (asked for)' : ''}`);
      this.didChangeMirrors.fire({ processId: info.process_id, mirrored: true });
      return mirror;
    } catch (err) {
      const message = `${info.process_id}: no terminal: ${describeError(err)}`;
      if (requested) throw new Error(`CodeSpace: ${message}`, { cause: err });
      this.logger.warn(`[terminals] ${message}`);
      return undefined;
    }
  }

  private ended(processId: string, status: ProcessStatus): void {
    const mirror = this.mirrors.get(processId);
    if (mirror) this.markFinished(processId, mirror, status);
  }

  /** The process of an open terminal has ended: the exit line, the grace timer, the cap on finished terminals. */
  private markFinished(processId: string, mirror: Mirror, status: ProcessStatus): void {
    mirror.pty.ended(status);
    if (mirror.finishedSeq !== undefined) return;
    mirror.finishedSeq = ++this.finishedCount;
    const delay = terminalSlots.closeDelayMs(mirror, this.settings.closeExitedAfterSeconds());
    if (delay !== undefined) {
      mirror.closeTimer = setTimeout(() => {
        if (this.mirrors.get(processId) === mirror) this.closeMirror(processId, `${delay / 1000} s after its exit`);
      }, delay);
    }
    for (const id of terminalSlots.finishedBeyondCap(this.holders())) this.closeMirror(id, 'too many finished terminals');
  }

  /** Closes a terminal without ending its process. */
  private closeMirror(processId: string, why: string): void {
    const mirror = this.mirrors.get(processId);
    if (!mirror) return;
    this.forget(processId, mirror.pty);
    this.logger.debug(`[terminals] ${processId}: terminal closed (${why})`);
    try {
      mirror.pty.closeQuietly(mirror.terminal);
    } catch (err) {
      this.logger.warn(`[terminals] closing the terminal of ${processId} failed: ${String(err)}`);
    }
  }

  /** The terminal of `pty` is gone (a later terminal of the same process is not). */
  private forget(processId: string, pty: ProcessPty): void {
    const mirror = this.mirrors.get(processId);
    if (mirror?.pty !== pty) return;
    clearTimeout(mirror.closeTimer);
    this.mirrors.delete(processId);
    if (!this.disposed) this.didChangeMirrors.fire({ processId, mirrored: false });
  }
}
