// The bundle replaces qs with src/base/node/noQs.ts (esbuild alias). This loads express and body-parser with that
// stand-in in qs's place, as the bundle does, and serves what this server serves: JSON bodies and simple query
// strings (the inbox's ?status=). Nothing reaches the stand-in; were anything to, it throws with a clear message.
import * as assert from 'node:assert/strict';
import type ExpressModule from 'express';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import * as shim from '../../src/base/node/noQs';

type Express = typeof ExpressModule;

function withQsReplaced<T>(load: () => T): T {
  const nodeModules = path.dirname(path.dirname(require.resolve('express/package.json')));
  const inNodeModules = (id: string) => id.startsWith(nodeModules);
  const saved = { ...require.cache };
  for (const id of Object.keys(require.cache)) if (inNodeModules(id)) delete require.cache[id];
  const qsPaths = [require.resolve('qs', { paths: [require.resolve('express')] }), require.resolve('qs', { paths: [require.resolve('body-parser')] })];
  for (const qs of qsPaths) {
    require.cache[qs] = { id: qs, filename: qs, loaded: true, exports: shim } as unknown as NodeJS.Module;
  }
  try {
    return load();
  } finally {
    for (const id of Object.keys(require.cache)) if (inNodeModules(id)) delete require.cache[id];
    Object.assign(require.cache, saved);
  }
}

describe('the bundle without qs', () => {
  it('serves JSON bodies and simple query strings through express as the server configures it', async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const express = withQsReplaced(() => require('express') as Express);
    const app = express();
    app.use(express.json());
    app.post('/echo', (req, res) => {
      res.json({ query: req.query, body: req.body as unknown });
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/echo?status=pending&a[b]=1&x=1&x=2`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ok: true }),
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { query: { status: 'pending', 'a[b]': '1', x: ['1', '2'] }, body: { ok: true } });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('says what is missing if anything ever calls it', () => {
    assert.throws(() => shim.parse(), /not part of this build/);
    assert.throws(() => shim.stringify(), /not part of this build/);
  });
});
