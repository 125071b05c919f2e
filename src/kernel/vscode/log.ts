import * as vscode from 'vscode';
import type { Logger } from '../../base/logger';
import { SecretMask } from '../../base/secretMask';

/**
 * The one log of the extension: a LogOutputChannel. Every line passes the masker, which hides the current and
 * past tokens, bearer headers and session ids, whatever component wrote it.
 */
export class OutputLogger implements Logger, vscode.Disposable {
  readonly channel: vscode.LogOutputChannel;
  private readonly masker = new SecretMask();

  constructor(name = 'CodeSpace') {
    this.channel = vscode.window.createOutputChannel(name, { log: true });
  }

  /** Adds a value that must never appear in the log. */
  addSecret(value: string): void {
    this.masker.add(value);
  }

  mask(text: string): string {
    return this.masker.apply(text);
  }

  private fmt(message: string | Error, args: unknown[]): string {
    const head = message instanceof Error ? (message.stack ?? message.message) : message;
    const rest = args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? (a.stack ?? a.message) : JSON.stringify(a)));
    return this.mask([head, ...rest].join(' '));
  }

  trace(m: string, ...a: unknown[]): void { this.channel.trace(this.fmt(m, a)); }
  debug(m: string, ...a: unknown[]): void { this.channel.debug(this.fmt(m, a)); }
  info(m: string, ...a: unknown[]): void { this.channel.info(this.fmt(m, a)); }
  warn(m: string, ...a: unknown[]): void { this.channel.warn(this.fmt(m, a)); }
  error(m: string | Error, ...a: unknown[]): void { this.channel.error(this.fmt(m, a)); }

  dispose(): void {
    this.channel.dispose();
  }
}
