import * as http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback reverse proxy that adds `Authorization: Bearer <token>` to every request and forwards it to the
 * endpoint on `targetPort`, streaming both ways. For clients that cannot send a header of their own (the MCP
 * conformance CLI connects with a bare URL). The Host header is rewritten to the target, as the endpoint's
 * DNS-rebinding guard expects; everything else passes unchanged, so the endpoint's own checks still apply.
 */
export async function startBearerProxy(targetPort: number, token: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, host: `127.0.0.1:${targetPort}`, authorization: `Bearer ${token}` };
    const upstream = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers, agent: false }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
