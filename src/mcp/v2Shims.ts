/**
 * The v2 SDK's Node shims (`@modelcontextprotocol/server/_shims`), as the extension bundle uses them (esbuild.mjs
 * aliases that import here). The SDK's own shim carries an inlined copy of ajv (about 150 KB minified) for its
 * default JSON Schema validator, which the server uses only to check answers to elicitations; this server never
 * elicits, so it gets the validator of src/mcp/noJsonSchemaValidator.ts, as the v1 SDK does in the bundle.
 */
export { AjvJsonSchemaValidator as DefaultJsonSchemaValidator } from './noJsonSchemaValidator';
export { default as process } from 'node:process';
