import type { ShippedCatalogue } from './catalogueSource';
import { computeShippedCatalogue } from './catalogueSource';

/**
 * The catalogue the bridge ships with. In dist/stdio.js esbuild replaces this module by the value computed at build
 * time (scripts/shippedCatalogue.mjs), so the bundle neither loads the tools nor converts their schemas at start.
 */
export const SHIPPED: ShippedCatalogue = computeShippedCatalogue('source');
