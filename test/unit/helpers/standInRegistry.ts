import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Local stand-ins for what a sandboxed command reaches through the network proxy, all on 127.0.0.1: a registry
 * answering plain HTTP, one answering HTTPS (a self-signed certificate for {@link TLS_NAME}, made with openssl),
 * and a listener standing for the MCP endpoint that counts every connection it gets.
 */
export const HTTP_NAME = 'registry.test';
export const TLS_NAME = 'tls.registry.test';

export interface StandIns {
  readonly httpPort: number;
  readonly tlsPort: number;
  readonly endpointPort: number;
  /** The certificate the TLS stand-in presents (also its own CA), PEM. */
  readonly caPem: string;
  /** Connections the endpoint stand-in received. */
  endpointConnections(): number;
  /** The test-only names for the proxy: each name to 127.0.0.1, for its own stand-in's port only. */
  testHosts(): Map<string, { address: string; port: number }>;
  close(): Promise<void>;
}

function listen(server: net.Server): Promise<number> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as net.AddressInfo).port)));
}

export async function startStandIns(): Promise<StandIns> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'codespace-standin-'));
  try {
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2', '-subj', `/CN=${TLS_NAME}`, '-addext', `subjectAltName=DNS:${TLS_NAME}`, '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'pipe' });
    const key = fs.readFileSync(path.join(dir, 'key.pem'), 'utf8');
    const caPem = fs.readFileSync(path.join(dir, 'cert.pem'), 'utf8');
    const plain = http.createServer((req, res) => res.end(`registry: ${req.method ?? '?'} ${req.url ?? '?'} host=${req.headers.host ?? ''}\n`));
    const secure = https.createServer({ key, cert: caPem }, (req, res) => res.end(`secure registry: ${req.url ?? '?'}\n`));
    let hits = 0;
    const endpoint = net.createServer((s) => {
      hits++;
      s.destroy();
    });
    const [httpPort, tlsPort, endpointPort] = await Promise.all([listen(plain), listen(secure), listen(endpoint)]);
    return {
      httpPort,
      tlsPort,
      endpointPort,
      caPem,
      endpointConnections: () => hits,
      testHosts: () =>
        new Map([
          [HTTP_NAME, { address: '127.0.0.1', port: httpPort }],
          [TLS_NAME, { address: '127.0.0.1', port: tlsPort }],
        ]),
      async close() {
        for (const s of [plain, secure]) s.closeAllConnections();
        await Promise.all([plain, secure, endpoint].map((s) => new Promise((resolve) => s.close(resolve))));
      },
    };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A proxy-aware client, run by Node inside the sandbox as `node client.js <mode> <host:port> [path]`, the way
 * package managers use the proxy variables: `http` sends an absolute-form GET to $HTTP_PROXY; `https` asks
 * $HTTPS_PROXY for a CONNECT tunnel and speaks TLS through it (trusting ./ca.pem); `direct` ignores the variables
 * and connects itself. One line out: `STATUS <code> <body>`, `TLS <authorized> <body>`, `CONNECTED` or `ERROR <code>`.
 */
export const PROXY_CLIENT = String.raw`
const http = require('http'), tls = require('tls'), fs = require('fs'), net = require('net');
const [mode, target, p] = process.argv.slice(2);
const done = (line, code) => { console.log(line.replace(/\s+/g, ' ').trim()); process.exit(code); };
const fail = (e) => done('ERROR ' + (e.code || e.message), 3);
const proxyOf = (v) => { const u = new URL(process.env[v]); return { host: u.hostname, port: Number(u.port) }; };
if (mode === 'http') {
  const proxy = proxyOf('http_proxy');
  http.get({ ...proxy, path: 'http://' + target + (p || '/'), headers: { host: target } }, (res) => {
    let b = ''; res.setEncoding('utf8'); res.on('data', (d) => (b += d)); res.on('end', () => done('STATUS ' + res.statusCode + ' ' + b, 0));
  }).on('error', fail);
} else if (mode === 'https') {
  const proxy = proxyOf('https_proxy');
  const req = http.request({ ...proxy, method: 'CONNECT', path: target, headers: { host: target } });
  req.on('connect', (res, socket, head) => {
    if (res.statusCode !== 200) {
      let b = head.toString(); socket.setEncoding('utf8'); socket.on('data', (d) => (b += d)); socket.on('close', () => done('STATUS ' + res.statusCode + ' ' + b, 0));
      return;
    }
    const name = target.replace(/:\d+$/, '');
    const s = tls.connect({ socket, servername: name, ca: fs.readFileSync('ca.pem') }, () => s.write('GET ' + (p || '/') + ' HTTP/1.1\r\nHost: ' + name + '\r\nConnection: close\r\n\r\n'));
    let b = ''; s.setEncoding('utf8'); s.on('data', (d) => (b += d)); s.on('error', fail);
    s.on('close', () => done('TLS ' + s.authorized + ' ' + b.split('\r\n\r\n').slice(1).join(''), 0));
  });
  req.on('error', fail); req.end();
} else if (mode === 'direct') {
  const i = target.lastIndexOf(':');
  net.connect(Number(target.slice(i + 1)), target.slice(0, i)).on('connect', () => done('CONNECTED', 0)).on('error', fail);
} else done('ERROR usage', 2);
`;
