/**
 * The relay inside a sandbox's own network namespace (`codespace.exec.network` `domains`), started before the
 * command as `node netRelay.js <proxy socket> <port>`: listens on 127.0.0.1:<port> of the namespace (its only
 * network) and carries every connection, unread, to the network proxy's Unix socket, which is bind-mounted into
 * the sandbox. Prints `ready` once it listens (the launcher waits for that line); anything else it prints is why
 * it could not start.
 *
 * A stand-alone script: bundled on its own into dist/netRelay.js, imports only Node's standard library.
 */
import * as net from 'node:net';

function main(argv: readonly string[]): void {
  const [socketPath, portText] = argv;
  const port = Number(portText);
  if (!socketPath || !Number.isInteger(port) || port <= 0 || port > 65535) {
    process.stderr.write('usage: netRelay <proxy socket> <port>\n');
    process.exit(2);
  }
  // Half-open on both sides: each end of file is passed on (by pipe) and the other direction keeps flowing.
  const server = net.createServer({ allowHalfOpen: true }, (client) => {
    const upstream = net.connect({ path: socketPath, allowHalfOpen: true });
    const fail = (): void => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', fail);
    upstream.on('error', fail);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  server.on('error', (err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
  server.listen({ host: '127.0.0.1', port }, () => process.stdout.write('ready\n'));
}

main(process.argv.slice(2));
