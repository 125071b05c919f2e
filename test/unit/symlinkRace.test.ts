import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import type { PatchWorld } from './helpers/patchWorld';
import { WS_ID, openPatchWorld } from './helpers/patchWorld';
import { MIN_SWAPS, runSwapRace } from './helpers/swapRace';

describe('confinement against a concurrent symlink swapper', function () {
  this.timeout(120_000);
  let world: PatchWorld;

  afterEach(async () => {
    await world?.dispose();
  });

  it(`never reads, previews, updates, adds, deletes or moves outside while links are swapped (≥ ${MIN_SWAPS} swaps)`, async () => {
    world = await openPatchWorld();
    const outside = path.join(world.tmp, 'outside');
    await fsp.mkdir(outside);
    const counts = await runSwapRace({ root: world.root, outside, workspaceId: WS_ID, call: (n, a) => world.call(n, a), runMs: 6000 });
    console.log(`      ${JSON.stringify(counts)}`);
  });
});
