import { posix } from 'node:path';

/**
 * How a sandbox with `codespace.exec.network` `domains` reaches the network proxy: it keeps its own network
 * namespace (only its loopback), the proxy's Unix socket and the relay script are bound read-only into its private
 * /tmp, and before the command a relay (netRelay.ts, run by the extension host's own Node) listens on
 * 127.0.0.1:{@link RELAY_PORT} inside and carries connections to the socket. The proxy variables point programs
 * there; a program that ignores them finds no network at all.
 */

/** Where the bridge lives inside the sandbox (its /tmp is a private tmpfs). */
export const NET_DIR = '/tmp/.codespace-network';
export const RELAY_PORT = 3128;

export interface NetBridge {
  /** The proxy's Unix socket, outside. */
  readonly socket: string;
  /** The relay script (dist/netRelay.js), outside. */
  readonly relayScript: string;
  /** The Node binary that runs the relay (the extension host's own; Electron runs as Node with ELECTRON_RUN_AS_NODE). */
  readonly node: string;
  /** mkfifo(1), absolute (the relay reports readiness through a FIFO). */
  readonly mkfifo: string;
}

const PROXY_URL = `http://127.0.0.1:${RELAY_PORT}`;
/** The sandbox's own loopback stays direct (a test server the command starts itself); everything else goes to the proxy. */
const NO_PROXY = 'localhost,127.0.0.1,::1';

/** The variables that send programs through the relay: curl, wget, pip, npm, cargo, go, git and Node 24's fetch read these. */
export function proxyEnvironment(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const k of ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'http_proxy', 'https_proxy', 'all_proxy', 'npm_config_proxy', 'npm_config_https_proxy']) env[k] = PROXY_URL;
  for (const k of ['NO_PROXY', 'no_proxy', 'npm_config_noproxy']) env[k] = NO_PROXY;
  return env;
}

/**
 * bubblewrap flags (after the private /tmp is mounted): the socket and the relay bound read-only, the variables set.
 * A Node that lives under /tmp (an editor unpacked there, or a test host in a checkout there) would be hidden by the
 * private /tmp: its folder is bound back read-only at the same path, so the relay starts.
 */
export function netBridgeMounts(b: NetBridge): string[] {
  const args = ['--ro-bind', b.socket, `${NET_DIR}/proxy.sock`, '--ro-bind', b.relayScript, `${NET_DIR}/relay.js`];
  const nodeDir = posix.dirname(b.node);
  if (nodeDir === '/tmp' || nodeDir.startsWith('/tmp/')) args.push('--ro-bind', nodeDir, nodeDir);
  for (const [k, v] of Object.entries(proxyEnvironment())) args.push('--setenv', k, v);
  return args;
}

/**
 * Starts the relay, waits for its `ready` line (through a FIFO: no polling), then runs the rest of its arguments.
 * The relay gets no stdin, none of the launcher's descriptors (3: the verified folder; 4, 5: the argument files; 6: the seccomp filter), and a
 * NODE_OPTIONS of its own.
 */
const RELAY_START =
  'm=$1 n=$2; shift 2; f=' + NET_DIR + '/ready; "$m" -m 600 "$f" || exit 126; ' +
  `NODE_OPTIONS= ELECTRON_RUN_AS_NODE=1 "$n" ${NET_DIR}/relay.js ${NET_DIR}/proxy.sock ${RELAY_PORT} </dev/null >"$f" 2>&1 3<&- 4<&- 5<&- 6<&- & ` +
  'IFS= read -r r <"$f"; [ "$r" = ready ] || { echo "CodeSpace: the sandbox network relay did not start: ${r:-no answer}" >&2; exit 126; }; exec "$@"';

/** The argv prefix that runs the relay inside the sandbox before the command (`sh` is /bin/sh). */
export function relayLauncher(sh: string, b: NetBridge): string[] {
  return [sh, '-c', RELAY_START, 'sh', b.mkfifo, b.node];
}
