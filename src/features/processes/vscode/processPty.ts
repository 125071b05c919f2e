import * as vscode from 'vscode';
import { describeError } from '../../../base/describeError';
import { InvalidArgumentsError, ToolError } from '../../../base/errors';
import type { Logger } from '../../../base/logger';
import type { ProcessInfo, ProcessStatus } from '../common/processTypes';
import { MAX_TERMINAL_DIMENSION } from '../common/processTypes';
import type { ProcessSupervisor } from '../common/supervisor';
import { TerminalFeed } from '../common/terminalFeed';
import { FLOOD_PACE, FLUSH_BYTES, MAX_PENDING_BYTES, workbenchBarrier } from './terminalPacing';
import { DIM, exitLine, KEY_SEQUENCE, RESET, toCrLf } from './terminalText';

/** What the mirror needs of the supervisor (structural, so tests can pass a fake). */
export type MirroredProcesses = Pick<
  ProcessSupervisor,
  'onDidStart' | 'onDidOutput' | 'onDidSkip' | 'onDidExit' | 'write' | 'resize' | 'terminate' | 'retainedOutput' | 'outputStats' | 'info' | 'status' | 'list'
>;

function clampDimension(n: number): number {
  return Math.min(MAX_TERMINAL_DIMENSION, Math.max(1, Math.floor(n)));
}

/** One process shown in one terminal: replay, live output, input, resize, close, exit line. */
export class ProcessPty implements vscode.Pseudoterminal {
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
