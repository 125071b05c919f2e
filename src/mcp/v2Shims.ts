/**
 * The v2 SDK's Node shims (`@modelcontextprotocol/server/_shims`), as the extension bundle uses them (esbuild.mjs
 * aliases that import here). The SDK's own shim carries a second, inlined copy of ajv (about 150 KB minified) for
 * its default JSON Schema validator, which only `fromJsonSchema` instantiates and this server never calls; the v1
 * SDK's ajv validator, already in the bundle, has the same `getValidator` interface.
 */
export { AjvJsonSchemaValidator as DefaultJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv-provider.js';
export { default as process } from 'node:process';
