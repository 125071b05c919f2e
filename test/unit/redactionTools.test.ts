/**
 * Redaction where agents read: a real command printing real-shaped fake credentials in pieces (read_process), our
 * own token, search result lines; and where they must not be redacted: read and apply_patch stay byte-exact.
 */
import * as assert from 'node:assert/strict';
import { promises as fsp } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_SEARCH_SETTINGS } from '../../src/features/files/common/contentSearch';
import { marker } from '../../src/base/secretRedactor';
import { shownText } from '../../src/base/shownText';
import { execCommandTool } from '../../src/features/processes/common/tools/execCommand';
import { readProcessTool } from '../../src/features/processes/common/tools/readProcess';
import { RipgrepContentSearch } from '../../src/features/files/node/ripgrepContentSearch';
import { fakeSecrets } from './helpers/fakeSecrets';
import type { ProcessToolsFixture } from './helpers/processToolsFixture';
import { processToolsFixture } from './helpers/processToolsFixture';
import type { Harness } from './helpers/workspaceFixture';
import { connectHarness, makeTree, ok, removeTree } from './helpers/workspaceFixture';

const secrets = fakeSecrets();
const gh = secrets['github-token'] as string;
const openai = secrets['openai-key'] as string;

/** A node script that writes `parts` one by one, pausing between them, then exits. */
function dribble(parts: string[]): string[] {
  return [process.execPath, '-e', `const p = ${JSON.stringify(parts)}; let i = 0; const next = () => { if (i === p.length) return; process.stdout.write(p[i++]); setTimeout(next, 40); }; next();`];
}

describe('redaction in what agents read back', function () {
  this.timeout(60_000);

  describe('read_process (real commands)', () => {
    let fx: ProcessToolsFixture;
    before(async () => {
      fx = await processToolsFixture();
    });
    after(async () => {
      await fx.dispose();
    });

    /** Reads to eof with small chunks, as an agent polling while output arrives. */
    async function readSmall(processId: string, max: number): Promise<{ text: string; cursor: number }> {
      let cursor = 0;
      let text = '';
      for (let i = 0; i < 2000; i++) {
        const r = await fx.call(readProcessTool, { process_id: processId, cursor, max_bytes: max, wait_ms: 1000 });
        text += r.chunk as string;
        cursor = r.cursor as number;
        if (r.eof) return { text, cursor };
      }
      throw new Error(`no eof: ${text}`);
    }

    it('tokens written in pieces across output chunks come back as markers; cursors count raw bytes', async () => {
      const parts = ['token one: ', gh.slice(0, 9), gh.slice(9, 25), gh.slice(25), '\nkey: sk', openai.slice(2, 30), openai.slice(30), '\ndone\n'];
      const { process_id } = (await fx.call(execCommandTool, { workspace_id: 'proj', command: dribble(parts) })) as { process_id: string };
      for (const max of [5]) {
        const { text, cursor } = await readSmall(process_id, max);
        assert.equal(text, `token one: ${marker('github-token')}\nkey: ${marker('openai-key')}\ndone\n`);
        assert.equal(cursor, Buffer.byteLength(parts.join('')), 'the cursor is the raw byte count of the output');
      }
      // Read again from the start in one go: the same text.
      assert.equal(await fx.readAll(process_id), `token one: ${marker('github-token')}\nkey: ${marker('openai-key')}\ndone\n`);
    });

    /** What a terminal shows of `text`: the redactor's own reading (escape sequences and hidden controls gone). */
    const shown = (text: string): string => shownText(Buffer.from(text, 'utf8').toString('latin1'))?.text ?? Buffer.from(text, 'utf8').toString('latin1');

    it('a real grep --color=always in a PTY prints a token with its match coloured: read_process returns it masked', async () => {
      await fsp.writeFile(path.join(fx.root, 'tokens.env'), `GITHUB_TOKEN=${gh}\nOPENAI=${openai}\nplain=ghp_short\n`);
      for (const pattern of ['ghp_', 'sk-', gh.slice(10, 14), '=']) {
        const { process_id } = (await fx.call(execCommandTool, { workspace_id: 'proj', command: ['grep', '--color=always', pattern, 'tokens.env'], tty: true })) as { process_id: string };
        const text = await fx.readAll(process_id);
        // A match inside the token puts its colour codes inside it: they go with it. Elsewhere they stay.
        if (pattern !== gh.slice(10, 14)) assert.ok(text.includes('\x1b['), `grep coloured its output (${JSON.stringify(text)})`);
        for (const secret of [gh, openai]) for (let i = 0; i + 8 <= secret.length; i += 4) assert.ok(!shown(text).includes(secret.slice(i, i + 8)), `${pattern}: ${JSON.stringify(text)}`);
        if (pattern !== 'sk-') assert.ok(shown(text).includes(`GITHUB_TOKEN=${marker('github-token')}`), `${pattern}: ${JSON.stringify(shown(text))}`);
        if (pattern === '=' || pattern === 'ghp_') assert.ok(shown(text).includes('plain=ghp_short'), 'a non-secret is kept');
        if (pattern === gh.slice(10, 14)) assert.equal(text, `GITHUB_TOKEN=${marker('github-token')}\r\n`);
      }
    });

    it('printf in a PTY writing a token in coloured pieces, with a hyperlink and a cursor move inside: masked whole', async () => {
      const parts = [`printf 'key: \\033[1;31m${gh.slice(0, 4)}\\033[0m'`, `printf '${gh.slice(4, 20)}\\033]8;;https://x.test\\033\\\\'`, 'sleep 0.1', `printf '${gh.slice(20, 30)}\\033[1C${gh.slice(30)}\\033[K done\\n'`];
      const { process_id } = (await fx.call(execCommandTool, { workspace_id: 'proj', command: ['sh', '-c', parts.join('; ')], tty: true })) as { process_id: string };
      for (const max of [3]) {
        const { text } = await readSmall(process_id, max);
        assert.equal(shown(text).trim(), `key: ${marker('github-token')} done`, JSON.stringify(text));
      }
      assert.equal(shown(await fx.readAll(process_id)).trim(), `key: ${marker('github-token')} done`);
    });

    it('our own token is redacted from output', async () => {
      const own = 'own-token-' + 'Q7x'.repeat(12);
      const registered = fx.supervisor.addSecret(own);
      try {
        const { process_id } = (await fx.call(execCommandTool, { workspace_id: 'proj', command: ['echo', `leaked ${own} here`] })) as { process_id: string };
        assert.equal(await fx.readAll(process_id), `leaked ${marker('codespace-token')} here\n`);
      } finally {
        registered.dispose();
      }
    });
  });

  describe('search lines, and read / apply_patch untouched', () => {
    let base: string;
    let h: Harness;
    const content = `const a = 1;\nconst token = "${gh}";\nconst b = 2;\n`;
    before(async () => {
      base = await makeTree({ 'proj/config.ts': content }, 'codespace-redact-search-');
      const search = new RipgrepContentSearch({ rgPath: '/usr/bin/rg', source: 'explicit', settings: () => DEFAULT_SEARCH_SETTINGS });
      h = await connectHarness([{ root: path.join(base, 'proj'), name: 'proj', profile: 'write' }], { contentSearch: search });
    });
    after(async () => {
      await h.close();
      await removeTree(base);
    });

    it('search redacts match and context lines', async () => {
      const r = ok<{ matches: { text: string; before?: { text: string }[]; after?: { text: string }[] }[] }>(await h.call('search', { workspace_id: 'proj', query: 'const', context_lines: 1 }));
      const texts = r.matches.flatMap((m) => [m.text, ...(m.before ?? []).map((c) => c.text), ...(m.after ?? []).map((c) => c.text)]);
      assert.ok(texts.includes(`const token = "${marker('github-token')}";`), JSON.stringify(texts));
      assert.ok(texts.every((t) => !t.includes(gh.slice(4, 20))));
    });

    it('read returns the exact bytes, and apply_patch edits the line holding the token', async () => {
      const read = ok<{ content: string; version: string }>(await h.call('read', { workspace_id: 'proj', path: 'config.ts' }));
      assert.equal(read.content, content);
      const patch = ['*** Begin Patch', '*** Update File: config.ts', '@@', ` const token = "${gh}";`, '-const b = 2;', '+const b = 3;', '*** End Patch', ''].join('\n');
      const applied = ok<{ status: string }>(await h.call('apply_patch', { workspace_id: 'proj', patch, expected_versions: { 'config.ts': read.version }, operation_key: 'edit-near-token' }));
      assert.equal(applied.status, 'applied');
      assert.equal(await fsp.readFile(path.join(base, 'proj', 'config.ts'), 'utf8'), content.replace('const b = 2;', 'const b = 3;'));
    });
  });
});
