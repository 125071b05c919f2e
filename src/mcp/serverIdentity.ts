/**
 * Who the server says it is, in both protocol revisions: its name, title and instructions. One definition for the
 * window's servers (toolServer.ts) and for what the stdio bridge answers before it has found the window
 * (src/bridge/catalogueSource.ts, computed at build time).
 */
export const SERVER_NAME = 'codespace';

export const SERVER_TITLE = 'CodeSpace for VS Code';

export const INSTRUCTIONS =
  'CodeSpace serves the folders open in the developer\'s VS Code window. Start with workspace_info (no arguments) to ' +
  'learn workspace ids, then workspace_info with an id to learn what is allowed. Paths are relative to the workspace ' +
  'root; lines and characters are 1-based (characters in UTF-16 code units, as editors count them). Read a file before ' +
  'patching it and pass the version you read as the expected version. Once a session has opened a work (work_open), every ' +
  'result carries coordination { work_id, queued_instructions }: above 0, call steer_claim_next. After an edit, any later ' +
  'result may carry diagnostics_update: what the language servers reported on the files you edited; fix what you broke. ' +
  'It may carry review_update: changes of yours the developer undid after the write (path, lines, text); do not redo them unasked.';

export function serverInfo(version: string): { name: string; title: string; version: string } {
  return { name: SERVER_NAME, title: SERVER_TITLE, version };
}

/**
 * The capabilities the window's servers end up advertising once everything is registered (toolServer.ts: tools,
 * the resource templates with subscriptions, the prompt and its completions; on 2026-07-28 the Tasks extension).
 * The bridge answers with these before it has found the window; test/unit/bridge.test.ts checks them against a
 * real window's `initialize` and `server/discover` answers.
 */
export const ADVERTISED_CAPABILITIES = {
  legacy: { tools: { listChanged: true }, completions: {}, resources: { listChanged: true, subscribe: true }, prompts: { listChanged: true } },
  modern: { tools: { listChanged: true }, resources: { subscribe: true, listChanged: true }, completions: {}, prompts: { listChanged: true }, extensions: { 'io.modelcontextprotocol/tasks': {} } },
} as const;
