import type { Logger } from '../../../../base/logger';
import type { NodePtyCandidate } from '../nodePtyLoader';
import { ProcessHost } from './host';
import { appendBounded } from './hostLog';
import { asError } from '../../../../base/describeError';

/**
 * Entry point of the process host (dist/processHost.js), started detached by the extension (launcher.ts). Its
 * settings arrive as one JSON line on stdin, so the secret never appears in an argv or environment another
 * process could read. It answers "ready" on stdout once its socket listens; its log goes to stderr (a file).
 */
interface HostConfig {
  readonly socket: string;
  readonly secret: string;
  readonly graceMs: number;
  readonly nodePty?: readonly NodePtyCandidate[];
  readonly relayScript?: string;
  readonly endsFile?: string;
  /** The log that outlives the state folder (hostLog.ts): every decision is appended there too. */
  readonly logFile?: string;
}

let survivingLog: string | undefined;

function line(level: string, message: string | Error, args: unknown[]): void {
  const text = message instanceof Error ? (message.stack ?? message.message) : message;
  const entry = `${new Date().toISOString()} [${level}] ${[text, ...args.map(String)].join(' ')}\n`;
  process.stderr.write(entry);
  if (survivingLog !== undefined) appendBounded(survivingLog, `${entry.slice(0, 25)}[host ${process.pid}] ${entry.slice(25)}`);
}

const logger: Logger = {
  trace: () => undefined,
  debug: () => undefined,
  info: (m, ...a) => line('info', m, a),
  warn: (m, ...a) => line('warn', m, a),
  error: (m, ...a) => line('error', m, a),
};

function readConfig(): Promise<HostConfig> {
  return new Promise((resolve, reject) => {
    let text = '';
    process.stdin.setEncoding('utf8');
    process.stdin.on('data', (chunk: string) => {
      text += chunk;
      const nl = text.indexOf('\n');
      if (nl < 0) return;
      process.stdin.pause();
      try {
        resolve(JSON.parse(text.slice(0, nl)) as HostConfig);
      } catch (err) {
        reject(asError(err));
      }
    });
    process.stdin.on('end', () => reject(new Error('no configuration on stdin')));
  });
}

async function main(): Promise<void> {
  process.title = 'codespace-process-host';
  const config = await readConfig();
  if (typeof config.logFile === 'string' && config.logFile !== '') survivingLog = config.logFile;
  const host = new ProcessHost({
    socket: config.socket,
    secret: config.secret,
    graceMs: config.graceMs,
    logger,
    ...(config.nodePty ? { nodePty: config.nodePty } : {}),
    ...(config.relayScript ? { relayScript: config.relayScript } : {}),
    ...(typeof config.endsFile === 'string' ? { endsFile: config.endsFile } : {}),
    onClosed: () => {
      logger.info('process host exiting');
      process.exit(0);
    },
  });
  for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => void host.close());
  await host.listen();
  logger.info(`process host ${process.pid} listening`);
  process.stdout.write('ready\n');
  process.stdin.destroy();
}

main().catch((err: unknown) => {
  logger.error(err instanceof Error ? err : String(err));
  process.exit(1);
});
