/** The core logs through this port; adapters decide where lines go and mask secrets. */
export interface Logger {
  trace(message: string, ...args: unknown[]): void;
  debug(message: string, ...args: unknown[]): void;
  info(message: string, ...args: unknown[]): void;
  warn(message: string, ...args: unknown[]): void;
  error(message: string | Error, ...args: unknown[]): void;
}

/** A logger that drops everything; for tests and for components built before logging is wired. */
export const silentLogger: Logger = {
  trace() {},
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** Collects lines in memory; test double. */
export class InMemoryLogger implements Logger {
  readonly lines: string[] = [];
  private push(level: string, message: string | Error, args: unknown[]): void {
    const text = message instanceof Error ? message.message : message;
    this.lines.push(`[${level}] ${[text, ...args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a)))].join(' ')}`);
  }
  trace(m: string, ...a: unknown[]): void { this.push('trace', m, a); }
  debug(m: string, ...a: unknown[]): void { this.push('debug', m, a); }
  info(m: string, ...a: unknown[]): void { this.push('info', m, a); }
  warn(m: string, ...a: unknown[]): void { this.push('warn', m, a); }
  error(m: string | Error, ...a: unknown[]): void { this.push('error', m, a); }
}
