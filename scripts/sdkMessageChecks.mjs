// An esbuild plugin for the MCP SDKs' message checks (v1: @modelcontextprotocol/sdk, v2: @modelcontextprotocol/server).
//
// Both SDKs' Protocol classify every incoming message by trying it first as a result response and then as an error
// response (`isJSONRPCResultResponse(m) || isJSONRPCErrorResponse(m)`, each a zod `safeParse`), and only then as a
// request. So every request a server receives fails two zod parses first, and a failing zod 4 parse builds its issues
// and an Error: about 0.09 ms a request in plain Node, more in a busy extension host, where the server's own answer
// to a 4 KiB `read` costs well under a millisecond (`npm run bench:editor read`). No upstream issue or fix was found
// for SDK 1.32.2 / server 2.0 (searched 2026-12-03); the closest is typescript-sdk#1007 (closed), a list of
// performance ideas that does not name this.
//
// The plugin puts a look at the message's keys before each parse: a result response must have `result`, an error
// response `error` (both schemas require them), so a message without that key fails the parse anyway and the answer
// never changes; with the key, the SDK's own parse decides, as before. The same for the check of a request's params
// for a task (`isTaskAugmentedRequestParams`, on every request): it fails, with the same cost, for every request that
// has no params (tools/list, ping). The bundle fails to build if the SDK's text changes (the expected definitions
// are not all found), so an SDK update cannot silently drop or misapply it.
// test/unit/sdkMessageChecks.test.ts bundles the SDKs' checks with this plugin and compares them with the
// originals on requests, notifications, responses and malformed messages.

/**
 * The checks, and the look before each parse. Each schema requires what its look asks for (a result response a
 * `result`, an error response an `error`; task-augmented request params are an object, and a request without params,
 * such as tools/list or ping, has none), so a message the look turns away fails the parse anyway.
 */
const CHECKS = [
  { name: 'isJSONRPCResultResponse', schema: 'JSONRPCResultResponseSchema', look: 'typeof value === "object" && value !== null && "result" in value' },
  { name: 'isJSONRPCErrorResponse', schema: 'JSONRPCErrorResponseSchema', look: 'typeof value === "object" && value !== null && "error" in value' },
  { name: 'isTaskAugmentedRequestParams', schema: 'TaskAugmentedRequestParamsSchema', look: 'typeof value === "object" && value !== null' },
];

/** Files that define the checks; each must define all of them. */
const FILES = [
  /[\\/]@modelcontextprotocol[\\/]sdk[\\/]dist[\\/](esm|cjs)[\\/]types\.js$/,
  /[\\/]@modelcontextprotocol[\\/]server[\\/]dist[\\/]src-[\w-]+\.(mjs|cjs)$/,
];

/** The source with the look put before each parse, and how many definitions were changed. */
export function withKeyChecks(source) {
  let count = 0;
  let code = source;
  for (const { name, schema, look } of CHECKS) {
    const definition = new RegExp(`\\b${name} = \\(value\\) => ((?:[\\w$]+\\.)?${schema})\\.safeParse\\(value\\)\\.success;`, 'g');
    code = code.replace(definition, (_all, qualified) => {
      count++;
      return `${name} = (value) => ${look} && ${qualified}.safeParse(value).success;`;
    });
  }
  return { code, count };
}

export function sdkMessageChecks() {
  return {
    name: 'sdk-message-checks',
    setup(build) {
      const expected = CHECKS.length;
      for (const filter of FILES) {
        build.onLoad({ filter }, async (args) => {
          const { readFile } = await import('node:fs/promises');
          const source = await readFile(args.path, 'utf8');
          const { code, count } = withKeyChecks(source);
          if (count !== expected) {
            return { errors: [{ text: `sdk-message-checks: expected ${expected} checks in ${args.path}, found ${count}; the SDK changed: review scripts/sdkMessageChecks.mjs` }] };
          }
          return { contents: code, loader: 'js' };
        });
      }
    },
  };
}
