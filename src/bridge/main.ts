// codespace-mcp: the stdio bridge to a CodeSpace window (dist/stdio.js). Logs go to stderr only: stdout carries
// the MCP messages. Usage: codespace-mcp [--workspace <path>] [--window-timeout <seconds>] [--reconnect-timeout <seconds>] [--list]
import { discoveryDirs, readAllRecords } from '../features/connect/node';
import { Bridge } from './bridge';
import { LineTransport } from './lineTransport';
import { ENV_TOKEN, ENV_URL, LocateError, locate } from './locate';
import { describeErrorWithStack } from '../base/describeError';

const USAGE = `codespace-mcp: MCP over stdio to the CodeSpace endpoint of a VS Code window.

  codespace-mcp [--workspace <path>] [--window-timeout <seconds>] [--reconnect-timeout <seconds>]
  codespace-mcp --list        print the CodeSpace windows found (no tokens)
  codespace-mcp --check       find the window as a client would, print it, exit 0 (1 when none or several)

Which window: --workspace <path> picks the window with a workspace folder containing <path>. Without it,
${ENV_URL} and ${ENV_TOKEN} (set in the terminals of a CodeSpace window) pick that window; without them,
the current directory is the path. The bridge answers initialize and tools/list at once from the tools it
ships with and finds the window in the background; a call made before then waits for it (default: up to 30 s)
and the client is told if the window serves another tool list. After a window reload the bridge finds the same window again and keeps
the client's session (default: waits up to 120 s).`;

function log(line: string): void {
  process.stderr.write(`[codespace-mcp] ${line}\n`);
}

interface Args {
  workspace?: string;
  reconnectTimeoutMs: number;
  windowTimeoutMs: number;
  mode: 'serve' | 'list' | 'check' | 'help';
}

function parseArgs(argv: readonly string[]): Args {
  const args: Args = { reconnectTimeoutMs: 120_000, windowTimeoutMs: 30_000, mode: 'serve' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    const seconds = (): number => {
      const s = Number(value());
      if (!Number.isFinite(s) || s < 0) throw new Error(`${a} takes seconds (0 or more)`);
      return s * 1000;
    };
    if (a === '--workspace' || a === '-w') args.workspace = value();
    else if (a?.startsWith('--workspace=')) args.workspace = a.slice('--workspace='.length);
    else if (a === '--reconnect-timeout') args.reconnectTimeoutMs = seconds();
    else if (a === '--window-timeout') args.windowTimeoutMs = seconds();
    else if (a === '--list') args.mode = 'list';
    else if (a === '--check') args.mode = 'check';
    else if (a === '--help' || a === '-h') args.mode = 'help';
    else throw new Error(`unknown argument ${JSON.stringify(a)}`);
  }
  return args;
}

async function main(): Promise<number> {
  let args: Args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    log(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const dirs = discoveryDirs();
  const locateOptions = { dirs, env: process.env, cwd: process.cwd(), ...(args.workspace !== undefined ? { workspace: args.workspace } : {}) };
  if (args.mode === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (args.mode === 'list') {
    const records = readAllRecords(dirs);
    process.stdout.write(`${JSON.stringify(records.map((f) => f.record), null, 2)}\n`);
    return 0;
  }
  if (args.mode === 'check') {
    try {
      const t = locate(locateOptions);
      process.stdout.write(`${t.describe}\n`);
      return 0;
    } catch (err) {
      log(err instanceof LocateError ? err.message : String(err));
      return 1;
    }
  }
  const bridge = new Bridge(new LineTransport(), { locate: locateOptions, reconnectTimeoutMs: args.reconnectTimeoutMs, windowTimeoutMs: args.windowTimeoutMs, log });
  await bridge.start();
  const stop = () => {
    void bridge.close().then(() => process.exit(0));
  };
  process.stdin.on('end', stop);
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  return -1;
}

main().then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    log(describeErrorWithStack(err));
    process.exitCode = 1;
  },
);
