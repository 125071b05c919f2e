/**
 * The JSON Schema validator both MCP SDK servers get in the extension bundle (esbuild.mjs puts it in place of the v1
 * SDK's `validation/ajv-provider.js`, and src/mcp/v2Shims.ts hands it to the v2 SDK). Each SDK server constructs one,
 * and calls it for one thing only: to check a client's answer to an elicitation (`elicitInput`) against the schema the
 * server asked with. This server never elicits, so the bundle leaves ajv out (about 130 KiB minified, a tenth of it),
 * and a call, should one ever come, fails loudly instead of passing an answer unchecked.
 * Tool inputs and outputs are checked with zod (src/mcp/toolServer.ts), which this does not touch.
 */
export class AjvJsonSchemaValidator {
  getValidator(_schema: unknown): never {
    throw new Error('JSON Schema validation (of elicitation answers) is not part of this build: the CodeSpace server never elicits.');
  }
}
