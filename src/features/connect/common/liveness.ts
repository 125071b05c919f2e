import type { Disposable } from '../../../base/disposable';
import { Emitter } from '../../../base/emitter';

/**
 * Whether the editor window of this extension host still answers. A local window's extension host ends with its
 * window; a remote one's (code-server, SSH) does not: when the browser reloads, the server starts a new extension
 * host for the new page and keeps the old one waiting for a reconnection (VS Code's server: three hours, shortened
 * to five minutes once another client connects). That old host cannot see it lost its window: a call to the window
 * just never returns. So it asks the window something cheap, and a question unanswered for a bounded time means the
 * window is gone; an answer arriving later means it came back (the same page reconnected).
 */
export type WindowAnswer = 'live' | 'lost';

export interface WindowLivenessOptions {
  /** One round trip to the window (a command the window runs); resolves when the window answered. */
  readonly roundTrip: () => PromiseLike<unknown>;
  /** How often the window is asked. */
  readonly intervalMs: number;
  /** How long a question may stay unanswered before the window counts as gone. */
  readonly timeoutMs: number;
  /** Told of a listener that threw (the others still hear of the change). */
  readonly onListenerError?: (err: unknown) => void;
}

/** The window's state, from round trips: one question at a time; `check` asks now with its own deadline. */
export class WindowLiveness implements Disposable {
  private state: WindowAnswer = 'live';
  private inFlight: Promise<void> | undefined;
  private askedAt = 0;
  private readonly changes: Emitter<WindowAnswer>;
  private readonly timer: ReturnType<typeof setInterval>;
  private disposed = false;

  constructor(private readonly options: WindowLivenessOptions) {
    this.changes = new Emitter(options.onListenerError);
    this.timer = setInterval(() => this.tick(), options.intervalMs);
    this.timer.unref?.();
  }

  get current(): WindowAnswer {
    return this.state;
  }

  onDidChange(listener: (state: WindowAnswer) => void): Disposable {
    return this.changes.on(listener);
  }

  /**
   * Asks the window now (or waits for the question already asked) and answers within `timeoutMs`: `lost` when the
   * window did not answer by then (and the state becomes lost, unless `settle` is false: the process host's
   * regular question only reports, so that a slow answer under load does not stop the endpoint), else `live`.
   */
  async check(timeoutMs: number, settle = true): Promise<WindowAnswer> {
    const answered = this.ask();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), timeoutMs);
    });
    const first = await Promise.race([answered.then(() => 'answered' as const), late]);
    clearTimeout(timer);
    if (first === 'late' && settle) this.set('lost');
    return first === 'late' ? 'lost' : 'live';
  }

  private tick(): void {
    if (this.disposed) return;
    void this.ask();
    if (this.inFlight && Date.now() - this.askedAt >= this.options.timeoutMs) this.set('lost');
  }

  /** The question in flight, or a new one. Its answer (whenever it comes) makes the window live again. */
  private ask(): Promise<void> {
    if (this.inFlight) return this.inFlight;
    this.askedAt = Date.now();
    const question = Promise.resolve()
      .then(() => this.options.roundTrip())
      .then(
        () => {
          this.inFlight = undefined;
          this.set('live');
        },
        () => {
          // The window answered, with an error: it is there.
          this.inFlight = undefined;
          this.set('live');
        },
      );
    this.inFlight = question;
    return question;
  }

  private set(state: WindowAnswer): void {
    if (this.disposed || this.state === state) return;
    this.state = state;
    this.changes.emit(state);
  }

  dispose(): void {
    this.disposed = true;
    clearInterval(this.timer);
    this.changes.dispose();
  }
}
