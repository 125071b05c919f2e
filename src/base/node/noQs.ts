/**
 * Stands in for the `qs` package in the bundle (esbuild.mjs aliases it here). express imports it for its "extended"
 * query parser and body-parser for `urlencoded()`; this server uses neither: express 5's default query parser is
 * "simple" (node:querystring) and the server parses only JSON bodies. Leaving qs out also leaves out the
 * side-channel and object-inspect packages it pulls in (about 45 KB minified). Never reached; says so if it is.
 */
function unavailable(): never {
  throw new Error('Extended query strings and form bodies are not part of this build (express uses its simple query parser).');
}

export function parse(): never {
  return unavailable();
}

export function stringify(): never {
  return unavailable();
}
